"""Sales domains: the deal pipeline and a loyalty programme."""

from __future__ import annotations

from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Move, Transition, pick, scaled
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.people import FIRST_NAMES, LAST_NAMES
from envsched_gym.envs.toolworld.records import RecordWorld, positive

from envsched_gym.tool import tool


class Deals(RecordWorld):
    """A sales pipeline: each deal has a value in dollars and a stage."""

    noun = "deal"
    id_prefix = "DL"

    @tool
    def find_deal(self, name: str) -> dict:
        """Look up a deal's id by the client company's name.

        Args:
            name: Client name, e.g. "Apex Foods".
        """
        return self.lookup(name)

    @tool
    def get_deal(self, deal_id: str) -> dict:
        """Read a deal: value in dollars, owner and status (its pipeline stage).

        Args:
            deal_id: Deal id such as "DL-009".
        """
        return self.view(deal_id)

    @tool
    def search_deals(self, query: str) -> list:
        """List the deals whose client name contains some text.

        Args:
            query: Part of a client name.
        """
        return self.search(query)

    @tool(write=True)
    def qualify_deal(self, deal_id: str) -> dict:
        """Move a deal from lead to qualified.

        Args:
            deal_id: Deal id.
        """
        return self.transition(deal_id, "qualified", ("lead",))

    @tool(write=True)
    def close_won(self, deal_id: str) -> dict:
        """Mark a qualified deal as won.

        Args:
            deal_id: Deal id.
        """
        return self.transition(deal_id, "won", ("qualified",))

    @tool(write=True)
    def set_deal_value(self, deal_id: str, value: int) -> dict:
        """Update a deal's expected value.

        Args:
            deal_id: Deal id.
            value: New value in whole dollars (positive).
        """
        return self.assign(deal_id, "value", int(positive(value, "value")))

    @tool(write=True)
    def reassign_deal(self, deal_id: str, owner: Literal["Maya", "Omar", "Priya", "Tom"]) -> dict:
        """Hand a deal to another sales rep.

        Args:
            deal_id: Deal id.
            owner: The new owner.
        """
        return self.assign(deal_id, "owner", owner)


OWNERS = ("Maya", "Omar", "Priya", "Tom")

DEALS = Domain(
    name="deals",
    world=Deals,
    description="You are a CRM assistant managing the sales pipeline. Deals are found by the client's name.",
    words=(
        ("Apex", "Blue", "Cedar", "Delta", "Ember", "Falcon", "Granite", "Harbor"),
        ("Foods", "Logistics", "Labs", "Media", "Motors", "Health"),
    ),
    make_record=lambda rng: {
        "value": rng.randint(5, 200) * 1000,
        "owner": rng.choice(OWNERS),
        "status": rng.choice(("lead", "lead", "qualified", "qualified", "won")),
    },
    fields=(("value", "deal value"), ("owner", "owner"), ("status", "stage")),
    actions=(
        Transition("qualify_deal", "deal_id", "qualified", ("lead",), "qualify {ref}"),
        Transition("close_won", "deal_id", "won", ("qualified",), "mark {ref} as won"),
        Assign(
            "set_deal_value", "deal_id", "value", "value", "set the value of {ref} to {value} dollars", scaled("value", 0.5, 1.5, step=1000)
        ),
        Assign("reassign_deal", "deal_id", "owner", "owner", "reassign {ref} to {value}", pick(OWNERS)),
    ),
    extras=("search_deals",),
)


class Loyalty(RecordWorld):
    """A loyalty programme: members with points and a tier."""

    noun = "member"
    id_prefix = "LOY"

    @tool
    def find_member(self, name: str) -> dict:
        """Look up a loyalty member's id by full name.

        Args:
            name: Member name, e.g. "Ines Haddad".
        """
        return self.lookup(name)

    @tool
    def get_member(self, member_id: str) -> dict:
        """Read a member: points balance and tier.

        Args:
            member_id: Member id such as "LOY-014".
        """
        return self.view(member_id)

    @tool(write=True)
    def award_points(self, member_id: str, points: int) -> dict:
        """Award points to a member.

        Args:
            member_id: Member id.
            points: Points to add (positive).
        """
        return self.adjust(member_id, "points", positive(points, "points"), what="points")

    @tool(write=True)
    def redeem_points(self, member_id: str, points: int) -> dict:
        """Redeem points for a reward; fails when the member has fewer points.

        Args:
            member_id: Member id.
            points: Points to redeem (positive).
        """
        return self.adjust(member_id, "points", -positive(points, "points"), what="points")

    @tool(write=True)
    def gift_points(self, from_member: str, to_member: str, points: int) -> dict:
        """Give points from one member to another.

        Args:
            from_member: Id of the giving member.
            to_member: Id of the receiving member.
            points: Points to give (positive).
        """
        return self.transfer(from_member, to_member, "points", points)

    @tool(write=True)
    def set_tier(self, member_id: str, tier: Literal["bronze", "silver", "gold"]) -> dict:
        """Change a member's tier.

        Args:
            member_id: Member id.
            tier: New tier.
        """
        return self.assign(member_id, "tier", tier)


LOYALTY = Domain(
    name="loyalty",
    world=Loyalty,
    description="You are a loyalty programme assistant. Members are found by full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=lambda rng: {"points": rng.randint(0, 5000), "tier": rng.choice(("bronze", "silver", "gold"))},
    fields=(("points", "points balance"), ("tier", "tier")),
    actions=(
        Adjust("redeem_points", "member_id", "points", "points", -1, "redeem {amount} points for {ref}", (100, 2000), "points"),
        Adjust("award_points", "member_id", "points", "points", 1, "award {amount} points to {ref}", (50, 1500), "points", None, "award"),
        Move(
            "gift_points",
            "from_member",
            "to_member",
            "points",
            "points",
            "gift {amount} points from {ref} to {dst}",
            (50, 1000),
            "points",
            "member",
        ),
        Assign("set_tier", "member_id", "tier", "tier", "change the tier of {ref} to {value}", pick(("bronze", "silver", "gold"))),
    ),
    limits={"award": (500, 1000)},
)
