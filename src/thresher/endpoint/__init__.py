"""The OpenAI-compatible endpoint, shared by chat (:mod:`thresher.llm`) and embeddings
(:mod:`thresher.index.embed.embedder`).

- ``settings``: where the endpoint is and how long to wait (base URL and key from
  the config or the environment, timeouts, retries);
- ``client``: the ``openai`` client with one retry policy (tenacity) and one
  mapping of failures to typed errors whose messages say what to check;
- ``retry``: the backoff arithmetic and error reading it uses (pure helpers).

It sits below :mod:`thresher.index`, so that both the index and the LLM layer
reach an endpoint the same way.
"""
