"""The code-changes workload: a CLI coding agent edits a git worktree, a person approves the
commit, and only that commit is pushed (and, when configured, opened as a pull request)."""
