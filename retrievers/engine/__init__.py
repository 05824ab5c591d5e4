"""The search engine: the index snapshot a search reads, the request, the two routes (direct lookups,
fused questions), the result documents and the derived structures kept per index revision."""
