"""Federation's background work: changes sent to followers, goodbyes said (``goodbye``),
spent signatures forgotten, and the deliveries of answers and other activities (when the
site federates)."""

from __future__ import annotations

from anonbox.core.chores import Chore, Needs, Tasks
from anonbox.federation import service
from anonbox.federation.delivery import FederationChannel, FederationCourier
from anonbox.federation.goodbye import service as goodbye
from anonbox.notifications.courier import Delivery


def _chores(needs: Needs) -> list[Chore]:
    return [
        Chore("federating changes", service.SWEEP_SECONDS, service.sweeper(needs.settings)),
        Chore("saying goodbyes", service.SWEEP_SECONDS, goodbye.sweeper(needs.settings)),
        Chore(
            "forgetting spent signatures",
            service.PURGE_SIGNATURES_SECONDS,
            service.forget_signatures,
        ),
    ]


def _deliveries(needs: Needs) -> list[Delivery]:
    site = service.site_of(needs.settings)
    if site is None:
        return []
    courier = FederationCourier(needs.db, needs.settings, site, needs.http)
    return [Delivery(FederationChannel(site), courier, courier.purge)]


TASKS = Tasks(chores=_chores, deliveries=_deliveries)
