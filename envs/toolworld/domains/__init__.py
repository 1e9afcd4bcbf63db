"""The ToolWorld domains, grouped by theme; :data:`DOMAINS` lists every one in a fixed order."""

from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.commerce import INVENTORY, PARKING, SHOP
from envsched_gym.envs.toolworld.domains.community import GYM, LIBRARY, SCHOOL, SMART_HOME
from envsched_gym.envs.toolworld.domains.finance import BANKING, BUDGETS, PAYROLL
from envsched_gym.envs.toolworld.domains.office import CALENDAR, FILESYSTEM, MESSAGING
from envsched_gym.envs.toolworld.domains.sales import DEALS, LOYALTY
from envsched_gym.envs.toolworld.domains.services import PHARMACY, RESTAURANT
from envsched_gym.envs.toolworld.domains.support import PROJECTS, TICKETS
from envsched_gym.envs.toolworld.domains.travel import FLEET, FLIGHTS, HOTEL

DOMAINS: tuple[Domain, ...] = (
    INVENTORY, SHOP, PHARMACY, RESTAURANT, PARKING,
    BANKING, PAYROLL, BUDGETS, DEALS, LOYALTY,
    CALENDAR, FILESYSTEM, MESSAGING, TICKETS, PROJECTS,
    HOTEL, FLIGHTS, FLEET,
    LIBRARY, GYM, SCHOOL, SMART_HOME,
)  # fmt: skip

__all__ = ["DOMAINS"]
