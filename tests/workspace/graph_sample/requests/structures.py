"""Data structures (reduced from requests.structures)."""


class LookupDict(dict):
    """Dictionary lookup object."""

    def __init__(self, name=None):
        self.name = name
        super().__init__()

    def get(self, key, default=None):
        return self.__dict__.get(key, default)
