"""Semantics: embedding models (static, transformer, the numpy BERT), the vector index, the semantic
retriever and its tiers (static vectors first, transformer vectors behind). Below ranking; never
imports it."""
