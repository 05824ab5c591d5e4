"""The lexical and structural sources: the text index (tantivy BM25 and trigrams), the structural
retriever over definitions, file cards and the call-graph retriever, with the identifier and literal
helpers they share. Each implements `retrievers.base.Retriever`; none knows about ranking."""
