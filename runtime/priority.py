"""The `Priority` a workflow starts with, and the model queue's per-tenant rate limit.

A compile's priority is set once, on its start (retain's signal-with-start, `wiki compile`, resume,
rebuild, the lint's wake-ups): Temporal gives every activity it schedules and every run it continues
as new the same priority, so the workflows themselves pass none (docs/cluster.md, "Many tenants").
"""

from __future__ import annotations

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import RateLimit
from temporalio.api.workflowservice.v1 import UpdateTaskQueueConfigRequest
from temporalio.client import Client
from temporalio.common import Priority

from domain.fairness import LINT_FAIRNESS_KEY, fairness_key, priority_key
from runtime.settings import Settings


def compile_priority(settings: Settings, tenant: str, trigger: str) -> Priority | None:
    """The priority of a compile of `tenant` woken by `trigger`; None when fairness is off."""
    if not settings.fairness_enabled:
        return None
    return Priority(priority_key=priority_key(trigger), fairness_key=fairness_key(tenant),
                    fairness_weight=settings.tenant_weight(tenant))


def lint_priority(settings: Settings) -> Priority | None:
    """The nightly lint's own priority (the compiles it wakes get their tenants' keys)."""
    if not settings.fairness_enabled:
        return None
    return Priority(priority_key=priority_key("lint"), fairness_key=LINT_FAIRNESS_KEY)


async def apply_tenant_rate_limit(client: Client, settings: Settings) -> bool:
    """Set the per-tenant rate limit of the model queue's activities (`Settings.tenant_max_per_second`:
    WIKI_LLM_TENANT_MAX_PER_SECOND, else WIKI_LLM_TENANT_QUOTA_SHARE of WIKI_LLM_MAX_PER_SECOND); whether
    it did (with neither, the queue's configuration is left as an operator set it).

    Temporal keeps it in the task queue's configuration, so the whole fleet shares it; a tenant's limit
    is this rate times its weight."""
    limit = settings.tenant_max_per_second()
    if not settings.llm_task_queue or limit is None:
        return False
    update = UpdateTaskQueueConfigRequest.RateLimitUpdate(
        rate_limit=RateLimit(requests_per_second=limit),
        reason="WIKI_LLM_TENANT_MAX_PER_SECOND / WIKI_LLM_TENANT_QUOTA_SHARE")
    await client.workflow_service.update_task_queue_config(UpdateTaskQueueConfigRequest(
        namespace=client.namespace, identity=client.identity, task_queue=settings.llm_task_queue,
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        update_fairness_key_rate_limit_default=update,
    ))
    return True
