"""Execution plans (docs/plan.md): the capability catalog
(:mod:`loopc.plan.catalog`, :mod:`loopc.plan.descriptor`,
:mod:`loopc.plan.builtin`), plan derivation (:mod:`loopc.plan.derive`), the
API (:func:`plan_source`, :func:`plan_file`, :func:`plan_artifact`) and the
compile-only inventory (:mod:`loopc.plan.inventory`).  Never imports
:mod:`loopc.cli`."""

from __future__ import annotations

from loopc.plan.api import PlanResult, plan_artifact, plan_file, plan_source
from loopc.plan.catalog import Catalog, CatalogBuilder, builtin_catalog, load_catalog, load_catalog_file

__all__ = [
    "Catalog",
    "CatalogBuilder",
    "PlanResult",
    "builtin_catalog",
    "load_catalog",
    "load_catalog_file",
    "plan_artifact",
    "plan_file",
    "plan_source",
]
