"""Typed search-attribute keys, registered on the dev server and used on every compile and lint run.

Only temporalio and the domain are imported here.
"""

from temporalio.common import SearchAttributeIndexedValueType, SearchAttributeKey

from messages.compile import WIKI_RUN_ATTRIBUTE

WIKI_TENANT = SearchAttributeKey.for_keyword("WikiTenant")
WIKI_OWNER = SearchAttributeKey.for_keyword("WikiOwner")
WIKI_TRIGGER = SearchAttributeKey.for_keyword("WikiTrigger")
# A compile run's number within its workflow (continue-as-new counts up): tells runs apart in a list.
WIKI_RUN = SearchAttributeKey.for_int(WIKI_RUN_ATTRIBUTE)

ALL_SEARCH_ATTRIBUTES = [WIKI_TENANT, WIKI_OWNER, WIKI_TRIGGER, WIKI_RUN]

# How `temporal server start-dev --search-attribute NAME=TYPE` and `temporal operator search-attribute
# create --type TYPE` spell each type used here.
TYPE_NAMES = {SearchAttributeIndexedValueType.KEYWORD: "Keyword", SearchAttributeIndexedValueType.INT: "Int"}
