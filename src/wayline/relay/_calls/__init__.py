"""Managed and manual LLM/tool calls: the implementation behind ``relay.llm`` and ``relay.tools``.

``llm`` holds manual spans and managed execution; ``llm_stream`` builds streaming on it
(one direction only, so the two never import each other); ``tools`` holds tool calls.
"""
