"""The OpenAI-compatible chat-completions client, shared by the LLM policy and synthesis.

It sits below the policies so that synthesis (LLM phrasing) and training can
call a model without importing a policy.
"""
