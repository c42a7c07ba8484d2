"""The HTTP API (version 1, under /api/v1/): bearer tokens with scopes, asking for a
sign-off, deciding, working and reading, mounted on the service's listener and `signoff web`."""
