"""Typed search-attribute keys, registered on the dev server and used on every compile and lint run.

Only temporalio is imported here, so workflows can import this module inside the sandbox.
"""

from temporalio.common import SearchAttributeKey

WIKI_TENANT = SearchAttributeKey.for_keyword("WikiTenant")
WIKI_OWNER = SearchAttributeKey.for_keyword("WikiOwner")
WIKI_TRIGGER = SearchAttributeKey.for_keyword("WikiTrigger")

ALL_SEARCH_ATTRIBUTES = [WIKI_TENANT, WIKI_OWNER, WIKI_TRIGGER]
