"""What the OpenAPI document says beyond what Litestar derives from the handlers: that a
struct refusing unknown fields refuses them, and that 429 and 503 answers say when to retry."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi.spec import (
    OpenAPI,
    OpenAPIHeader,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Schema,
)

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator
    from litestar.typing import FieldDefinition


class ClosedStructs(StructSchemaPlugin):
    """Litestar's schema of a msgspec struct, with ``additionalProperties: false`` when
    the struct is declared ``forbid_unknown_fields`` (msgspec then refuses them with a 400,
    which the document did not say)."""

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        info = msgspec.inspect.type_info(field_definition.type_)
        if isinstance(info, msgspec.inspect.StructType) and info.forbid_unknown_fields:
            schema.additional_properties = False
        return schema


_RETRY_AFTER = {
    # Every 503 says when to come back; every 429 too, but for proof_of_work_required,
    # which asks for a solution instead of a wait.
    "429": False,
    "503": True,
}


def document_retry_after(document: OpenAPI) -> OpenAPI:
    """``document`` with the Retry-After header on every 429 and 503 answer it lists.

    Litestar's ``ResponseSpec`` cannot carry headers; ``handle_anonbox_error`` sets them."""
    for path_item in (document.paths or {}).values():
        for method in ("get", "put", "post", "delete", "patch"):
            operation: Operation | None = getattr(path_item, method)
            for status, required in _RETRY_AFTER.items():
                response = (operation.responses or {}).get(status) if operation else None
                if isinstance(response, OpenAPIResponse):
                    response.headers = {
                        "Retry-After": OpenAPIHeader(
                            schema=Schema(type=OpenAPIType.INTEGER, minimum=0),
                            required=required,
                            description="Seconds to wait before trying again",
                        )
                    }
    return document


def keep_component_names(module: str, *types: type) -> None:
    """Keep the OpenAPI names of the envelopes of ``types``, which moved out of ``module``.

    Litestar names a response's envelope component after its data type's module
    (``Envelope_typing.Literal_200_anonbox.safety.blocks.BlockList_``), so moving a type
    would rename a component that clients generate code from. A module that calls this
    does without ``from __future__ import annotations``: msgspec would look its string
    annotations up in ``module``, which is gone."""
    for moved in types:
        moved.__module__ = module
