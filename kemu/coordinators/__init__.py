"""The two coordinators on a broker, each a shell around its sans-I/O core that journals to an internal topic.

`Coordinators(broker)` holds them. A broker restarted on its data recovers them at once (the group
coordinator replays `__consumer_offsets`, the transaction coordinator `__transaction_state` and queues the
markers of transactions left prepared); a broker with no topics has nothing to recover, so each waits for
its first use, and the broker answers its first Metadata without importing either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.broker.broker import BrokerCore

if TYPE_CHECKING:
    # Imported on first use only (start-up time); no cycle: neither module imports this one.
    from kemu.coordinators.crash_points import CrashHook
    from kemu.coordinators.group_service import GroupService
    from kemu.coordinators.share_fetch import ShareFetchManager
    from kemu.coordinators.txn_service import TxnService


class Coordinators:
    def __init__(self, broker: BrokerCore, *, crash_hook: CrashHook | None = None) -> None:
        """`crash_hook` is the transaction coordinator's (`TxnService.crash_hook`), kept here until it is made:
        a broker that never uses transactions never makes one (it writes its epoch file)."""
        self.broker = broker
        self._groups: GroupService | None = None
        self._txn: TxnService | None = None
        self._share: ShareFetchManager | None = None
        self._crash_hook = crash_hook
        if len(broker.topics):
            _ = self.groups, self.txn

    @property
    def groups(self) -> GroupService:
        if self._groups is None:
            from kemu.coordinators.group_service import GroupService

            # A share-group member leaving gives back what it acquired (ShareFetchManager.member_left).
            self._groups = GroupService(self.broker, on_share_member_left=self._share_member_left)
        return self._groups

    def _share_member_left(self, group_id: str, member_id: str) -> None:
        if self._share is not None:
            self._share.member_left(group_id, member_id)

    @property
    def share(self) -> ShareFetchManager:
        """Share sessions and share-partitions (KIP-932), made by the first ShareFetch or ShareAcknowledge."""
        if self._share is None:
            from kemu.coordinators.share_fetch import ShareFetchManager

            self._share = ShareFetchManager(self.broker)
        return self._share

    @property
    def txn(self) -> TxnService:
        if self._txn is None:
            from kemu.coordinators.txn_service import TxnService

            self._txn = TxnService(self.broker, self._crash_hook)
        return self._txn

    @property
    def share_made(self) -> bool:
        """Whether the share fetch manager has been made (by the first ShareFetch or ShareAcknowledge)."""
        return self._share is not None

    @property
    def txn_made(self) -> bool:
        """Whether the transaction coordinator has been made (by its first use, or at start on a broker with
        topics to recover)."""
        return self._txn is not None

