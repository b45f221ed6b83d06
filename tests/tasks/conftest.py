"""Task tests share the eval tests' invented HotpotQA file and its pooled index."""

from eval.conftest import tiny_hotpot, write_tiny_hotpot  # noqa: F401  (fixtures, re-exported)
