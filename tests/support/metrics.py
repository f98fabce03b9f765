"""Reading /metrics as Prometheus does."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

Labels = frozenset[tuple[str, str]]


def scrape(api: httpx.Client) -> dict[tuple[str, Labels], float]:
    """Every sample of /metrics, by name and labels."""
    response = api.get("/metrics")
    assert response.status_code == 200, response.text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: dict[tuple[str, Labels], float], name: str, **labels: str) -> float:
    """One sample's value; 0 for a series that has not appeared yet."""
    return samples.get((name, frozenset(labels.items())), 0.0)
