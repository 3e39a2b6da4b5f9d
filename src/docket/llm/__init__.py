"""LLM layer: the Model wrapper over thin providers named by string."""

from docket.llm.model import Model, Parsed, RetryPolicy
from docket.llm.provider import Provider, create_provider, register_provider
from docket.llm.types import Completion, Message, Request, TokenLogprob

__all__ = [
    "Completion",
    "Message",
    "Model",
    "Parsed",
    "Provider",
    "Request",
    "RetryPolicy",
    "TokenLogprob",
    "create_provider",
    "register_provider",
]
