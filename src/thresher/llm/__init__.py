"""The OpenAI-compatible chat-completions client, shared by the LLM policy and synthesis.

``client``: chat completions and model listing over :mod:`thresher.endpoint`;
``context``: the server's context size, read where each server says it. It sits
below the policies so that synthesis (LLM phrasing) and training can call a
model without importing a policy.
"""
