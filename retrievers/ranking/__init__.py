"""Ranking: the profile of weights, the query's intent, weighted Reciprocal Rank Fusion of the
sources' lists, the priors, the relevance floor and grouping. Reads the sources' hits; knows no engine."""
