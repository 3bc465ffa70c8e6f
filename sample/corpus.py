"""A deterministic sample corpus: nine months of one agent's memories about its user, Eric.

The corpus exists to exercise the whole compiler offline (demo, tests, benchmarks): it is built only
from `random.Random(seed)`, so the same (memories, seed) always gives byte-identical JSONL.

What it contains, and why:
- Eric lives in Austin, so most memories are Austin restaurants, cafés and parks; a few favourites
  recur all year and the rest come in short bursts (two to four visits close together), which is how
  the leaf compile sees a name twice in one batch and makes a page of it.
- Trips (Toronto, Mexico City, Paris, San Francisco, Lisbon, London, Tokyo) are journals: every
  memory of a trip carries the journal, and places there have real address formats for the city rule.
- Recurring names are written differently from time to time (case, accents, small typos, nicknames,
  "Paris, France" for "Paris"), so alias matching and fuzzy de-duplication have work to do.
- Decisions are mentioned one to three times; a handful of names appear exactly three or four times,
  each in a different batch, so they start as unresolved mentions and get promoted; passing names
  (a server, a shop) appear exactly once.
"""

from __future__ import annotations

import json
import random
import string
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from os import PathLike
from typing import Any, TextIO

FIRST_DAY = date(2026, 1, 5)
LAST_DAY = date(2026, 9, 28)
# Eric writes more on trips than at home.
TRIP_DAY_WEIGHT = 1.5
# Memories happen between 07:00 and 22:00 UTC.
DAY_START_HOUR = 7
DAY_SPAN_SECONDS = 15 * 3600
# A batch of the leaf compile holds at most 50 memories; names meant to stay unresolved until promoted
# are spaced further apart than that, so no two of their mentions ever share a batch.
BATCH_SIZE = 50
RARE_NAME_MIN_GAP = BATCH_SIZE + 3
RARE_NAME_MAX_GAP = BATCH_SIZE + 14
ONE_OFF_SHARE = 0.035
UNTAGGED_SHARE = 0.07
# At home: the share of memories that are visits, and what the other memories are about.
HOME_VISIT_SHARE = 0.56
HOME_NOTE_WEIGHTS = {"people": 0.5, "work": 0.32, "misc": 0.18}
# The share of home visits that go to the all-year favourites rather than the places in rotation.
CORE_PLACE_SHARE = 0.5

# How a written name differs from the canonical one. For the ones that are other names for the same
# thing (not misspellings) the memory lists the canonical name among the entity's aliases.
ALIAS_BEARING_HOWS = frozenset({"nickname", "short", "qualified", "local"})


# --------------------------------------------------------------------------- catalogue types


@dataclass(frozen=True, kw_only=True)
class EntitySpec:
    """A recurring name: its canonical spelling and the other ways memories write it."""

    name: str
    type: str = "entity"
    kind: str
    aliases: tuple[str, ...] = ()
    # (written form, how it differs): "case", "accent", "typo", "nickname", "short", "qualified", "local".
    variants: tuple[tuple[str, str], ...] = ()
    # Every `variant_every`-th mention after the first uses the next variant.
    variant_every: int = 3
    tags: tuple[str, ...] = ()

    def written_form(self, occurrence: int) -> tuple[str, str]:
        """The name as the `occurrence`-th (0-based) memory mentioning it writes it, and how it differs."""
        if not self.variants or occurrence % self.variant_every != 1:
            return self.name, "canonical"
        return self.variants[(occurrence // self.variant_every) % len(self.variants)]

    def entity(self, written: str, how: str) -> dict[str, Any]:
        canonical = [self.name] if how in ALIAS_BEARING_HOWS else []
        aliases = [alias for alias in dict.fromkeys([*canonical, *self.aliases]) if alias != written]
        row: dict[str, Any] = {"name": written, "type": self.type, "kind": self.kind}
        if aliases:
            row["aliases"] = aliases
        return row


@dataclass(frozen=True, kw_only=True)
class Place(EntitySpec):
    city: EntitySpec
    address: str
    types: tuple[str, ...]
    # What Eric has there: dishes, drinks, or for parks what he does there.
    items: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Trip:
    journal_id: str
    title: str
    city: EntitySpec
    first_day: date
    last_day: date
    hotel: Place
    # The first place is the trip's favourite: it comes up twice as often as the others.
    places: tuple[Place, ...]
    companion_key: str
    tags: tuple[str, ...] = ("travel",)


@dataclass(frozen=True, kw_only=True)
class Storyline:
    """A name that recurs a fixed number of times, with one line per mention (decisions, rare names)."""

    entity: EntitySpec
    lines: tuple[str, ...]
    # Decisions are dated: days after FIRST_DAY of each line. Rare names are placed by batch spacing.
    day_offsets: tuple[int, ...] = ()


def _city(name: str, variant: str, how: str) -> EntitySpec:
    return EntitySpec(name=name, type="topic", kind="city", variants=((variant, how),), variant_every=4)


def _place(
    name: str,
    city: EntitySpec,
    address: str,
    types: tuple[str, ...],
    items: tuple[str, ...],
    *,
    kind: str,
    tags: tuple[str, ...] = (),
    variants: tuple[tuple[str, str], ...] = (),
    aliases: tuple[str, ...] = (),
    variant_every: int = 3,
) -> Place:
    return Place(
        name=name,
        kind=kind,
        city=city,
        address=address,
        types=types,
        items=items,
        tags=tags,
        variants=variants,
        aliases=aliases,
        variant_every=variant_every,
    )


RESTAURANT = ("restaurant", "food")
CAFE = ("cafe",)
BAKERY_CAFE = ("cafe", "bakery")
PARK = ("park",)
HOTEL = ("lodging", "hotel")

# --------------------------------------------------------------------------- cities

# The catalogue is data, laid out one entry per block for reading; the formatter leaves it alone.
# fmt: off

AUSTIN = _city("Austin", "Austin, TX", "qualified")
TORONTO = _city("Toronto", "Toronto, Ontario", "qualified")
MEXICO_CITY = _city("Mexico City", "Ciudad de México", "local")
PARIS = _city("Paris", "Paris, France", "qualified")
SAN_FRANCISCO = _city("San Francisco", "San Francisco, CA", "qualified")
LISBON = _city("Lisbon", "Lisboa", "local")
LONDON = _city("London", "London, UK", "qualified")
TOKYO = _city("Tokyo", "Tokyo, Japan", "qualified")

# --------------------------------------------------------------------------- Austin

AUSTIN_FAVOURITES: tuple[tuple[Place, float], ...] = (
    (
        _place(
            "Franklin Barbecue", AUSTIN, "900 E 11th St, Austin, TX 78702, USA", RESTAURANT,
            ("the moist brisket", "a pound of brisket and two sausages", "the pulled pork sandwich", "turkey and ribs"),
            kind="restaurant", tags=("food", "bbq"), variants=(("franklin barbecue", "case"),),
            aliases=("Franklin BBQ",), variant_every=5,
        ),
        0.25,
    ),
    (
        _place(
            "Epoch Coffee", AUSTIN, "221 W North Loop Blvd, Austin, TX 78751, USA", CAFE,
            ("an oat milk cortado", "a large drip coffee", "an iced americano", "a chai latte"),
            kind="cafe", tags=("coffee",), variants=(("epoch coffee", "case"),), variant_every=5,
        ),
        0.25,
    ),
    (
        _place(
            "Barton Springs Pool", AUSTIN, "2131 William Barton Dr, Austin, TX 78746, USA", PARK,
            ("a morning swim", "a few laps before work", "a long swim and a nap on the grass"),
            kind="park", tags=("outdoors", "swimming"), variants=(("Barton Spring Pool", "typo"),),
        ),
        0.15,
    ),
    (
        _place(
            "Zilker Metropolitan Park", AUSTIN, "2100 Barton Springs Rd, Austin, TX 78746, USA", PARK,
            ("a long walk", "frisbee on the great lawn", "a picnic under the pecan trees"),
            kind="park", tags=("outdoors",), variants=(("Zilker Park", "short"),), aliases=("Zilker Park",),
        ),
        0.12,
    ),
    (
        _place(
            "Veracruz All Natural", AUSTIN, "1704 E Cesar Chavez St, Austin, TX 78702, USA", RESTAURANT,
            ("the migas taco", "two migas tacos and an agua fresca", "the fish taco"),
            kind="restaurant", tags=("food", "tacos"), variants=(("Veracruz All Naturall", "typo"),),
        ),
        0.12,
    ),
    (
        _place(
            "Cosmic Coffee + Beer Garden", AUSTIN, "121 Pickle Rd, Austin, TX 78704, USA", CAFE,
            ("a cold brew", "a pour-over and a pastry", "a flight of local beers"),
            kind="cafe", tags=("coffee",), variants=(("Cosmic Coffee + Beer Gardens", "typo"),),
        ),
        0.07,
    ),
    (
        _place(
            "Lady Bird Lake Hike & Bike Trail", AUSTIN, "1820 S Lakeshore Blvd, Austin, TX 78741, USA", PARK,
            ("the full ten-mile loop", "an easy run", "a walk at sunset"),
            kind="park", tags=("outdoors", "running"),
            variants=(("Lady Bird Lake Hike and Bike Trail", "typo"),), aliases=("Butler Trail",),
        ),
        0.04,
    ),
)

AUSTIN_ROTATION: tuple[Place, ...] = (
    _place("Uchi", AUSTIN, "801 S Lamar Blvd, Austin, TX 78704, USA", RESTAURANT,
           ("the hama chili", "the omakase", "the brussels sprouts"), kind="restaurant", tags=("food", "sushi")),
    _place("Suerte", AUSTIN, "1800 E 6th St, Austin, TX 78702, USA", RESTAURANT,
           ("the suadero tacos", "the masa fries"), kind="restaurant", tags=("food",)),
    _place("Odd Duck", AUSTIN, "1201 S Lamar Blvd, Austin, TX 78704, USA", RESTAURANT,
           ("the pork belly", "a round of small plates"), kind="restaurant", tags=("food",)),
    _place("Launderette", AUSTIN, "2115 Holly St, Austin, TX 78702, USA", RESTAURANT,
           ("the brick chicken", "the birthday cake ice cream sandwich"), kind="restaurant", tags=("food",)),
    _place("Matt's El Rancho", AUSTIN, "2613 S Lamar Blvd, Austin, TX 78704, USA", RESTAURANT,
           ("the Bob Armstrong dip", "cheese enchiladas"), kind="restaurant", tags=("food", "tex-mex")),
    _place("Torchy's Tacos", AUSTIN, "1822 S Congress Ave, Austin, TX 78704, USA", RESTAURANT,
           ("the Trailer Park taco", "queso and chips"), kind="restaurant", tags=("food", "tacos")),
    _place("Ramen Tatsu-Ya", AUSTIN, "1234 S Lamar Blvd, Austin, TX 78704, USA", RESTAURANT,
           ("the tonkotsu original", "the spicy miso ramen"), kind="restaurant", tags=("food", "ramen")),
    _place("La Barbecue", AUSTIN, "2401 E Cesar Chavez St, Austin, TX 78702, USA", RESTAURANT,
           ("the beef rib", "the El Sancho sandwich"), kind="restaurant", tags=("food", "bbq")),
    _place("Micklethwait Craft Meats", AUSTIN, "1309 Rosewood Ave, Austin, TX 78702, USA", RESTAURANT,
           ("the jalapeño cheddar sausage", "brisket and lemon poppyseed coleslaw"), kind="restaurant",
           tags=("food", "bbq"), variants=(("Micklethwaite Craft Meats", "typo"),)),
    _place("Kerbey Lane Cafe", AUSTIN, "3704 Kerbey Ln, Austin, TX 78731, USA", RESTAURANT,
           ("gingerbread pancakes", "the Kerbey queso"), kind="restaurant", tags=("food", "brunch")),
    _place("Emmer & Rye", AUSTIN, "51 Rainey St #110, Austin, TX 78701, USA", RESTAURANT,
           ("the cacio e pepe", "dim-sum-style carts of small plates"), kind="restaurant", tags=("food",)),
    _place("Loro", AUSTIN, "2115 S Lamar Blvd, Austin, TX 78704, USA", RESTAURANT,
           ("the smoked beef brisket with chili gastrique", "the corn fritters"), kind="restaurant",
           tags=("food",)),
    _place("Dai Due", AUSTIN, "2406 Manor Rd, Austin, TX 78722, USA", RESTAURANT,
           ("the wild boar chop", "the butcher's breakfast"), kind="restaurant", tags=("food",)),
    _place("Home Slice Pizza", AUSTIN, "1415 S Congress Ave, Austin, TX 78704, USA", RESTAURANT,
           ("a slice of white pie", "a large pepperoni"), kind="restaurant", tags=("food", "pizza")),
    _place("Tacodeli", AUSTIN, "1500 Spyglass Dr, Austin, TX 78746, USA", RESTAURANT,
           ("the Otto taco", "the Frontera fundido"), kind="restaurant", tags=("food", "tacos")),
    _place("Nixta Taqueria", AUSTIN, "2512 E 12th St, Austin, TX 78702, USA", RESTAURANT,
           ("the duck carnitas", "the beet tostada"), kind="restaurant", tags=("food", "tacos")),
    _place("Jo's Coffee", AUSTIN, "1300 S Congress Ave, Austin, TX 78704, USA", CAFE,
           ("an iced turbo", "a cold brew"), kind="cafe", tags=("coffee",)),
    _place("Houndstooth Coffee", AUSTIN, "401 Congress Ave #100c, Austin, TX 78701, USA", CAFE,
           ("a flat white", "a single-origin pour-over"), kind="cafe", tags=("coffee",)),
    _place("Summer Moon Coffee", AUSTIN, "3115 S 1st St, Austin, TX 78704, USA", CAFE,
           ("a moon milk latte", "a wood-fired drip coffee"), kind="cafe", tags=("coffee",)),
    _place("Merit Coffee", AUSTIN, "222 West Ave, Austin, TX 78701, USA", CAFE,
           ("a cortado", "an espresso and tonic"), kind="cafe", tags=("coffee",)),
    _place("Mozart's Coffee Roasters", AUSTIN, "3825 Lake Austin Blvd, Austin, TX 78703, USA", CAFE,
           ("a mocha", "a slice of tres leches cake"), kind="cafe", tags=("coffee",)),
    _place("Bouldin Creek Cafe", AUSTIN, "1900 S 1st St, Austin, TX 78704, USA", CAFE,
           ("a veggie scramble", "a chai"), kind="cafe", tags=("coffee", "food")),
    _place("Mueller Lake Park", AUSTIN, "4550 Mueller Blvd, Austin, TX 78723, USA", PARK,
           ("a walk around the lake", "the Saturday farmers market"), kind="park", tags=("outdoors",)),
    _place("Mount Bonnell", AUSTIN, "3800 Mt Bonnell Rd, Austin, TX 78731, USA", PARK,
           ("the climb up the stairs", "the sunset view over the river"), kind="park", tags=("outdoors",)),
    _place("McKinney Falls State Park", AUSTIN, "5808 McKinney Falls Pkwy, Austin, TX 78744, USA", PARK,
           ("a hike to the lower falls", "a swim below the upper falls"), kind="park", tags=("outdoors", "hiking")),
    _place("Red Bud Isle", AUSTIN, "3401 Red Bud Trail, Austin, TX 78746, USA", PARK,
           ("an off-leash loop", "fetch in the shallows"), kind="park", tags=("outdoors", "dog")),
    _place("Hotel Saint Cecilia", AUSTIN, "112 Academy Dr, Austin, TX 78704, USA", HOTEL,
           ("a staycation night", "drinks by the pool"), kind="hotel", tags=("hotel",)),
    _place("Hotel San José", AUSTIN, "1316 S Congress Ave, Austin, TX 78704, USA", HOTEL,
           ("a staycation night", "a courtyard breakfast"), kind="hotel", tags=("hotel",),
           variants=(("Hotel San Jose", "accent"),)),
)

# --------------------------------------------------------------------------- trips

TRIPS: tuple[Trip, ...] = (
    Trip(
        journal_id="j-toronto-2026", title="Toronto, February 2026", city=TORONTO,
        first_day=date(2026, 2, 12), last_day=date(2026, 2, 18), companion_key="lena",
        hotel=_place("The Drake Hotel", TORONTO, "1150 Queen St W, Toronto, ON M6J 1J3, Canada", HOTEL,
                     ("the rooftop bar",), kind="hotel", tags=("hotel",)),
        places=(
            _place("Momofuku Daishō", TORONTO, "190 University Ave, Toronto, ON M5H 0A3, Canada", RESTAURANT,
                   ("the bo ssäm", "the spicy cucumbers and the fried chicken"), kind="restaurant",
                   tags=("food",), variants=(("Momofuku Daisho", "accent"),), variant_every=2),
            _place("Pai Northern Thai Kitchen", TORONTO, "18 Duncan St, Toronto, ON M5H 3G8, Canada", RESTAURANT,
                   ("the khao soi", "the pad see ew"), kind="restaurant", tags=("food", "thai")),
            _place("Alo Restaurant", TORONTO, "163 Spadina Ave, Toronto, ON M5V 2L6, Canada", RESTAURANT,
                   ("the tasting menu",), kind="restaurant", tags=("food",)),
            _place("St. Lawrence Market", TORONTO, "93 Front St E, Toronto, ON M5E 1C3, Canada", ("food", "market"),
                   ("a peameal bacon sandwich", "butter tarts"), kind="market", tags=("food",)),
            _place("Trinity Bellwoods Park", TORONTO, "790 Queen St W, Toronto, ON M6J 1G1, Canada", PARK,
                   ("a snowy walk", "watching the pond skaters"), kind="park", tags=("outdoors",)),
        ),
    ),
    Trip(
        journal_id="j-cdmx-2026", title="Mexico City, March 2026", city=MEXICO_CITY,
        first_day=date(2026, 3, 19), last_day=date(2026, 3, 26), companion_key="lena",
        hotel=_place("Hotel Condesa DF", MEXICO_CITY,
                     "Av. Veracruz 102, Condesa, 06700 Ciudad de México, CDMX, Mexico", HOTEL,
                     ("the rooftop terrace",), kind="hotel", tags=("hotel",)),
        places=(
            _place("Contramar", MEXICO_CITY, "Durango 200, Roma Nte., 06700 Ciudad de México, CDMX, Mexico",
                   RESTAURANT, ("the tuna tostadas", "the red and green grilled fish"), kind="restaurant",
                   tags=("food", "seafood")),
            _place("Máximo Bistrot", MEXICO_CITY,
                   "Av. Álvaro Obregón 130, Roma Nte., 06700 Ciudad de México, CDMX, Mexico", RESTAURANT,
                   ("the soft-shell crab", "the tasting menu"), kind="restaurant", tags=("food",),
                   variants=(("Maximo Bistrot", "accent"),)),
            _place("Panadería Rosetta", MEXICO_CITY, "Colima 179, Roma Nte., 06700 Ciudad de México, CDMX, Mexico",
                   BAKERY_CAFE, ("a guava roll", "a rol de guayaba and a coffee"), kind="bakery",
                   tags=("coffee", "food"), variants=(("Panaderia Rosetta", "accent"),)),
            _place("Café de Tacuba", MEXICO_CITY,
                   "Tacuba 28, Centro Histórico, 06000 Ciudad de México, CDMX, Mexico", RESTAURANT,
                   ("the enchiladas", "tamales and hot chocolate"), kind="restaurant", tags=("food",),
                   variants=(("Cafe de Tacuba", "accent"),)),
            _place("Parque México", MEXICO_CITY, "Av. México s/n, Hipódromo, 06100 Ciudad de México, CDMX, Mexico",
                   PARK, ("a morning run", "watching the dog training classes"), kind="park",
                   tags=("outdoors",), variants=(("Parque Mexico", "accent"),)),
        ),
    ),
    Trip(
        journal_id="j-paris-2026", title="Paris, Spring 2026", city=PARIS,
        first_day=date(2026, 4, 22), last_day=date(2026, 5, 1), companion_key="lena",
        hotel=_place("Hôtel de Buci", PARIS, "22 Rue de Buci, 75006 Paris, France", HOTEL,
                     ("the little bar downstairs",), kind="hotel", tags=("hotel",),
                     variants=(("Hotel de Buci", "accent"),)),
        places=(
            _place("Café de Flore", PARIS, "172 Bd Saint-Germain, 75006 Paris, France", CAFE,
                   ("a café crème", "hot chocolate and a croissant"), kind="cafe", tags=("coffee",),
                   variants=(("Cafe de Flore", "accent"),), variant_every=2),
            _place("Le Comptoir du Relais", PARIS, "9 Carrefour de l'Odéon, 75006 Paris, France", RESTAURANT,
                   ("the steak frites", "the pâté en croûte"), kind="restaurant", tags=("food",)),
            _place("Le Bistrot Paul Bert", PARIS, "18 Rue Paul Bert, 75011 Paris, France", RESTAURANT,
                   ("the steak au poivre", "the Paris-Brest"), kind="restaurant", tags=("food",)),
            _place("Du Pain et des Idées", PARIS, "34 Rue Yves Toudic, 75010 Paris, France", BAKERY_CAFE,
                   ("an escargot pistache", "the pain des amis"), kind="bakery", tags=("food",),
                   variants=(("Du Pain et des Idees", "accent"),)),
            _place("Jardin du Luxembourg", PARIS, "Rue de Médicis, 75006 Paris, France", PARK,
                   ("an afternoon in the green chairs", "a slow loop past the fountain"), kind="park",
                   tags=("outdoors",)),
        ),
    ),
    Trip(
        journal_id="j-sf-offsite-2026", title="San Francisco Offsite, May 2026", city=SAN_FRANCISCO,
        first_day=date(2026, 5, 18), last_day=date(2026, 5, 21), companion_key="priya", tags=("travel", "work"),
        hotel=_place("Hotel Zetta", SAN_FRANCISCO, "55 5th St, San Francisco, CA 94103, USA", HOTEL,
                     ("the game room",), kind="hotel", tags=("hotel",)),
        places=(
            _place("Tartine Manufactory", SAN_FRANCISCO, "595 Alabama St, San Francisco, CA 94110, USA",
                   ("restaurant", "cafe", "food"), ("the morning bun", "a country loaf to share"),
                   kind="bakery", tags=("food", "coffee"), variants=(("Tartine Manufacttory", "typo"),),
                   variant_every=2),
            _place("Zuni Café", SAN_FRANCISCO, "1658 Market St, San Francisco, CA 94102, USA", RESTAURANT,
                   ("the roast chicken with bread salad",), kind="restaurant", tags=("food",),
                   variants=(("Zuni Cafe", "accent"),), variant_every=2),
            _place("La Taqueria", SAN_FRANCISCO, "2889 Mission St, San Francisco, CA 94110, USA", RESTAURANT,
                   ("a carnitas burrito dorado",), kind="restaurant", tags=("food",)),
            _place("Ritual Coffee Roasters", SAN_FRANCISCO, "1026 Valencia St, San Francisco, CA 94110, USA", CAFE,
                   ("a cappuccino",), kind="cafe", tags=("coffee",)),
            _place("Golden Gate Park", SAN_FRANCISCO, "501 Stanyan St, San Francisco, CA 94117, USA", PARK,
                   ("a run out to the ocean",), kind="park", tags=("outdoors",)),
        ),
    ),
    Trip(
        journal_id="j-lisbon-2026", title="Lisbon, June 2026", city=LISBON,
        first_day=date(2026, 6, 10), last_day=date(2026, 6, 18), companion_key="lena",
        hotel=_place("Alfama Terrace Apartment", LISBON, "Travessa das Merceeiras 27, 1100-348 Lisboa, Portugal",
                     HOTEL, ("the terrace over the river",), kind="apartment", tags=("travel",)),
        places=(
            _place("Pastéis de Belém", LISBON, "R. de Belém 84-92, 1300-085 Lisboa, Portugal", BAKERY_CAFE,
                   ("two custard tarts warm from the oven",), kind="bakery", tags=("food", "dessert"),
                   variants=(("Pasteis de Belem", "accent"),), variant_every=2),
            _place("Cervejaria Ramiro", LISBON, "Av. Almirante Reis 1, 1150-007 Lisboa, Portugal", RESTAURANT,
                   ("garlic prawns and a steak sandwich", "the tiger prawns"), kind="restaurant",
                   tags=("food", "seafood")),
            _place("Copenhagen Coffee Lab", LISBON, "R. Nova da Piedade 10, 1200-405 Lisboa, Portugal", CAFE,
                   ("a flat white and a cardamom bun",), kind="cafe", tags=("coffee",)),
            _place("Jardim da Estrela", LISBON, "Praça da Estrela, 1200-667 Lisboa, Portugal", PARK,
                   ("a shady afternoon by the pond",), kind="park", tags=("outdoors",)),
            _place("Miradouro da Senhora do Monte", LISBON, "Largo Monte, 1170-107 Lisboa, Portugal", PARK,
                   ("the sunset over the castle",), kind="viewpoint", tags=("outdoors",)),
        ),
    ),
    Trip(
        journal_id="j-london-2026", title="London, July 2026", city=LONDON,
        first_day=date(2026, 7, 8), last_day=date(2026, 7, 14), companion_key="lena",
        hotel=_place("The Hoxton Holborn", LONDON, "199-206 High Holborn, London WC1V 7BD, UK", HOTEL,
                     ("the lobby bar",), kind="hotel", tags=("hotel",)),
        places=(
            _place("Dishoom Covent Garden", LONDON, "12 Upper St Martin's Ln, London WC2H 9FB, UK", RESTAURANT,
                   ("the bacon naan roll", "the black daal"), kind="restaurant", tags=("food", "indian"),
                   variants=(("Dishoom", "short"),), aliases=("Dishoom",)),
            _place("Padella", LONDON, "6 Southwark St, London SE1 1TQ, UK", RESTAURANT,
                   ("the pici cacio e pepe",), kind="restaurant", tags=("food", "pasta")),
            _place("Borough Market", LONDON, "8 Southwark St, London SE1 1TL, UK", ("food", "market"),
                   ("a raclette sandwich", "oysters at the counter"), kind="market", tags=("food",)),
            _place("Monmouth Coffee", LONDON, "27 Monmouth St, London WC2H 9EU, UK", CAFE,
                   ("a filter coffee",), kind="cafe", tags=("coffee",)),
            _place("Hyde Park", LONDON, "Serpentine Rd, London W2 2UH, UK", PARK,
                   ("a walk along the Serpentine", "a deck chair in the sun"), kind="park", tags=("outdoors",)),
        ),
    ),
    Trip(
        journal_id="j-tokyo-2026", title="Tokyo, Summer 2026", city=TOKYO,
        first_day=date(2026, 8, 17), last_day=date(2026, 8, 27), companion_key="lena",
        hotel=_place("Park Hyatt Tokyo", TOKYO, "3-7-1-2 Nishishinjuku, Shinjuku City, Tokyo 163-1055, Japan", HOTEL,
                     ("the view from the 41st floor",), kind="hotel", tags=("hotel",)),
        places=(
            _place("Afuri Harajuku", TOKYO, "1-1-7 Jingumae, Shibuya City, Tokyo 150-0001, Japan", RESTAURANT,
                   ("the yuzu shio ramen",), kind="restaurant", tags=("food", "ramen")),
            _place("Ichiran Shibuya", TOKYO, "1-22-7 Jinnan, Shibuya City, Tokyo 150-0041, Japan", RESTAURANT,
                   ("tonkotsu ramen in a solo booth",), kind="restaurant", tags=("food", "ramen"),
                   variants=(("Ichiran", "short"),), aliases=("Ichiran",)),
            _place("Fuglen Tokyo", TOKYO, "1-16-11 Tomigaya, Shibuya City, Tokyo 151-0063, Japan", CAFE,
                   ("an aeropress of a light Kenyan roast",), kind="cafe", tags=("coffee",)),
            _place("Yoyogi Park", TOKYO, "2-1 Yoyogikamizonocho, Shibuya City, Tokyo 151-0052, Japan", PARK,
                   ("a Sunday stroll past the rockabilly dancers",), kind="park", tags=("outdoors",)),
            _place("Shinjuku Gyoen National Garden", TOKYO, "11 Naitomachi, Shinjuku City, Tokyo 160-0014, Japan",
                   PARK, ("a quiet walk through the Japanese garden",), kind="park", tags=("outdoors",),
                   variants=(("Shinjuku Gyoen National Gardens", "typo"),), variant_every=2),
        ),
    ),
)

# --------------------------------------------------------------------------- people

PEOPLE: dict[str, EntitySpec] = {
    "pet": EntitySpec(
        name="Biscuit", kind="pet", aliases=("Biscuit the corgi", "Bisky"), tags=("dog",),
        variants=(("Bisky", "nickname"), ("Biscuit the corgi", "nickname")),
    ),
    "joao": EntitySpec(
        name="Chef João", kind="person", aliases=("João", "João Almeida"), tags=("friends", "food"),
        variants=(("João", "nickname"), ("Chef Joao", "accent")),
    ),
    "lena": EntitySpec(name="Lena", kind="person", aliases=("Lena Park",), tags=("family",),
                       variants=(("Lena Park", "nickname"),), variant_every=6),
    "sam": EntitySpec(name="Sam Okafor", kind="person", aliases=("Sam",), tags=("friends", "running"),
                      variants=(("Sam", "nickname"),)),
    "priya": EntitySpec(name="Priya Raman", kind="person", aliases=("Priya",), tags=("work",),
                        variants=(("Priya", "nickname"),)),
    "ruth": EntitySpec(name="Ruth Harlan", kind="person", aliases=("Ruth",), tags=("family",),
                       variants=(("Ruth", "nickname"),)),
}
ATLAS = EntitySpec(name="Project Atlas", type="topic", kind="project", tags=("work",))
DINING_COMPANIONS = ("lena", "lena", "joao", "sam", "ruth")

# --------------------------------------------------------------------------- decisions and rare names


def _decision(title: str, tags: tuple[str, ...], *dated_lines: tuple[int, str]) -> Storyline:
    return Storyline(
        entity=EntitySpec(name=title, type="decision", kind="decision", tags=tags),
        lines=tuple(line for _, line in dated_lines),
        day_offsets=tuple(offset for offset, _ in dated_lines),
    )


DECISIONS: tuple[Storyline, ...] = (
    _decision(
        "Switch to a standing desk", ("work", "health"),
        (15, "Eric made the call to switch to a standing desk after his lower back flared up again during a "
             "week of long calls."),
        (31, "Two weeks after the decision to switch to a standing desk, Eric says his back feels better but "
             "his feet ache by late afternoon."),
        (52, "Eric added an anti-fatigue mat and says he will stick with the choice to switch to a standing desk."),
    ),
    _decision(
        "Start Spanish lessons before Mexico City", ("learning", "travel"),
        (23, "Eric decided to start Spanish lessons before Mexico City, two evenings a week with an online tutor."),
        (82, "The decision to start Spanish lessons before Mexico City is paying off: Eric now orders food "
             "without switching to English."),
    ),
    _decision(
        "Sign Biscuit up for agility classes", ("dog",),
        (51, "Eric and Lena agreed to sign Biscuit up for agility classes on Saturday mornings."),
        (88, "Since they chose to sign Biscuit up for agility classes, weekends start at 8am; he loves the tunnel."),
    ),
    _decision(
        "Book the Lisbon apartment for June", ("travel",),
        (56, "Eric and Lena decided to book the Lisbon apartment for June, the one in Alfama with the terrace."),
        (135, "Follow-up to the choice to book the Lisbon apartment for June: the host needs passport details "
              "a week before arrival."),
    ),
    _decision(
        "Cut back to one coffee a day", ("health", "coffee"),
        (91, "Eric decided to cut back to one coffee a day because afternoon coffee was wrecking his sleep."),
        (120, "Eric admits the plan to cut back to one coffee a day slips on travel days, but he sleeps better."),
    ),
    _decision(
        "Move the team standup to 10am", ("work",),
        (119, "Eric pushed to move the team standup to 10am so mornings stay free for focused work."),
    ),
    _decision(
        "Sell the old Subaru", ("car",),
        (171, "Eric decided to sell the old Subaru now that he bikes to work most days."),
        (184, "Eric listed the car online; the plan to sell the old Subaru is on track with two offers so far."),
    ),
    _decision(
        "Run the Austin 10K in the fall", ("running", "fitness"),
        (198, "Eric committed to run the Austin 10K in the fall and is following a twelve-week plan."),
        (240, "Halfway through training to run the Austin 10K in the fall; Eric's long run is up to seven miles."),
    ),
    _decision(
        "Cancel the gym membership", ("fitness",),
        (212, "Eric decided to cancel the gym membership and work out at home and on the trail instead."),
    ),
    _decision(
        "Host Thanksgiving at home this year", ("family",),
        (248, "Eric and Lena decided to host Thanksgiving at home this year and invite both families."),
        (261, "Planning continues after the decision to host Thanksgiving at home this year: Eric is "
              "practising a smoked turkey."),
    ),
)

RARE_NAMES: tuple[Storyline, ...] = (
    Storyline(
        entity=EntitySpec(name="Dr. Amara Osei", kind="person", tags=("health",)),
        lines=(
            "Eric started physical therapy for his shoulder with Dr. Amara Osei; she gave him banded rotations "
            "to do daily.",
            "Second session with Dr. Amara Osei: Eric's range of motion is better but overhead presses still hurt.",
            "Dr. Amara Osei cleared Eric to swim again as long as he keeps up the warm-up routine.",
            "Eric's last scheduled visit with Dr. Amara Osei; she only wants to see him if the shoulder flares up.",
        ),
    ),
    Storyline(
        entity=EntitySpec(name="Greenbelt Bike Co.", kind="shop", tags=("cycling",)),
        lines=(
            "Eric dropped his bike at Greenbelt Bike Co. for a tune-up; the rear derailleur was bent.",
            "Greenbelt Bike Co. fitted wider tyres on Eric's bike for the gravel path along the creek.",
            "Eric bought a new helmet at Greenbelt Bike Co. after his old one cracked in a fall.",
            "The mechanic at Greenbelt Bike Co. says Eric's chain needs replacing before the fall rides.",
        ),
    ),
    Storyline(
        entity=EntitySpec(name="Marisol Vega", kind="person", tags=("dog",)),
        lines=(
            "Marisol Vega started walking the dog on Tuesdays and Thursdays while Eric is in the office.",
            "Marisol Vega texted that the dog pulled hard at the squirrels again; she suggests a front-clip harness.",
            "Eric paid Marisol Vega for the month and asked her to add Fridays.",
            "Marisol Vega will be away for two weeks, so Eric needs someone else for the walks.",
        ),
    ),
    Storyline(
        entity=EntitySpec(name="Wildflower Pottery Studio", kind="studio", tags=("hobbies",)),
        lines=(
            "Lena signed up for a wheel-throwing class at Wildflower Pottery Studio on Wednesday nights.",
            "Lena brought home her first bowls from Wildflower Pottery Studio; Eric thinks they are great.",
            "Eric booked a couples' glazing session at Wildflower Pottery Studio as a surprise for Lena.",
            "Wildflower Pottery Studio is holding a member show, and two of Lena's mugs are in it.",
        ),
    ),
    Storyline(
        entity=EntitySpec(name="Hollis Reed", kind="person", tags=("neighbours",)),
        lines=(
            "The new neighbour, Hollis Reed, brought over a jar of homemade pickles and offered to lend his ladder.",
            "Hollis Reed and Eric split the cost of fixing the shared fence.",
            "Hollis Reed invited Eric to his backyard crawfish boil next Saturday.",
        ),
    ),
)

ALL_PLACES: tuple[Place, ...] = (
    *(place for place, _ in AUSTIN_FAVOURITES),
    *AUSTIN_ROTATION,
    *(place for trip in TRIPS for place in (trip.hotel, *trip.places)),
)
CITIES: tuple[EntitySpec, ...] = (AUSTIN, *(trip.city for trip in TRIPS))
# Every name that recurs on purpose; anything else a memory names is a passing name, used once.
RECURRING_ENTITIES: tuple[EntitySpec, ...] = (
    *ALL_PLACES,
    *CITIES,
    *PEOPLE.values(),
    ATLAS,
    *(storyline.entity for storyline in (*DECISIONS, *RARE_NAMES)),
)
# (canonical name, written variant, how it differs) for every variant the corpus may write.
NAME_VARIANTS: tuple[tuple[str, str, str], ...] = tuple(
    (spec.name, variant, how) for spec in RECURRING_ENTITIES for variant, how in spec.variants
)

# --------------------------------------------------------------------------- passing names (used once)

ONE_OFF_SHOP_PREFIXES = (
    "Juniper", "Copper", "Magpie", "Lantern", "Saffron", "Thistle", "Marigold", "Bramble", "Cobalt",
    "Indigo", "Willow", "Hazel", "Ember", "Sparrow", "Pebble", "Clover", "Falcon", "Harbor", "Meadow",
    "Quarry",
)
ONE_OFF_SHOP_KINDS = (
    ("Books", "bookshop", "a used paperback"),
    ("Records", "record shop", "a secondhand jazz LP"),
    ("Hardware", "hardware store", "a set of picture hooks"),
    ("Florist", "florist", "a bunch of tulips for Lena"),
    ("Vintage", "vintage shop", "a wool jacket"),
    ("Stationers", "stationery shop", "a pack of fine-tip pens"),
    ("Tea House", "tea shop", "a tin of smoked black tea"),
    ("Cheese Shop", "cheese shop", "a wedge of aged gouda"),
    ("Ceramics", "ceramics shop", "a pair of espresso cups"),
    ("Tailors", "tailor", "a hemmed pair of trousers"),
    ("Optics", "optician", "a new pair of sunglasses"),
    ("Outfitters", "outdoor shop", "a lighter rain jacket"),
    ("Plant Nursery", "plant nursery", "a small fiddle-leaf fig"),
    ("Wine Cellar", "wine shop", "a bottle of grower champagne"),
    ("Spice Market", "spice shop", "a bag of smoked paprika"),
)
ONE_OFF_FIRST_NAMES = (
    "Thaddeus", "Ingrid", "Octavio", "Perpetua", "Rafferty", "Svetlana", "Ignatius", "Delphine",
    "Lazarus", "Wilhelmina", "Casimir", "Ottilie", "Evander", "Philippa", "Barnaby", "Zofia",
    "Leopold", "Mireille", "Cornelius", "Henrietta", "Florian", "Ysolde", "Gideon", "Clementine",
)
ONE_OFF_LAST_NAMES = (
    "Abernathy", "Vukovic", "Lindqvist", "Okonkwo", "Castellanos", "Fairweather", "Nakagawa", "Dubois",
    "Thornbury", "Kowalczyk", "Achterberg", "Pellegrino", "Halvorsen", "Mbeki", "Szabo", "Quintero",
    "Ravensworth", "Ferreira", "Ostrowski", "Bellamy",
)
ONE_OFF_ROLES = ("a server", "a bartender", "the host", "a waiter")

# --------------------------------------------------------------------------- sentence templates

RESTAURANT_TEMPLATES = (
    "Eric had {item} at {place}{with}{in}; {reaction}.",
    "Dinner at {place}{with}{in}. Eric ordered {item} and {verdict}.",
    "Eric went back to {place}{in} for {item}{with} and {verdict}.",
    "Lunch at {place}{in}{with}: {item}. {Reaction}.",
    "Eric waited about {wait} minutes for a table at {place}{in}{with} and {verdict}.",
)
CAFE_TEMPLATES = (
    "Eric worked from {place}{in} for the morning{with} and had {item}; {cafe_note}.",
    "Coffee at {place}{in}{with}: {item}. {Cafe_note}.",
    "Eric picked up {item} from {place}{in} on the way to {errand}.",
    "Eric read for an hour at {place}{in}{with} over {item}; {cafe_note}.",
)
PARK_TEMPLATES = (
    "Eric went to {place}{in}{with} for {item}; {park_note}.",
    "Morning at {place}{in}{with}: {item} and {weather}.",
    "Eric spent a slow afternoon at {place}{in}{with}, mostly {item}; {park_note}.",
)
DOG_PARK_TEMPLATES = (
    "Eric took {pet} to {place}{in} for {item}; {park_note}.",
    "{Pet} and Eric went to {place}{in}{with} for {item}, and {pet_note}.",
)
HOME_HOTEL_TEMPLATES = (
    "Eric and {lena} booked {place}{in} for {item}; {lodging_note}.",
    "Eric put his mother {ruth} up at {place}{in} for her visit; {lodging_note}.",
)
CHECK_IN_TEMPLATES = (
    "Eric and {companion} checked into {place}{in}; {lodging_note}.",
    "Arrived{in} and checked into {place} with {companion}; {lodging_note}.",
)
HOTEL_MID_TEMPLATES = ("Back at {place}{in} after a long day, Eric enjoyed {item}; {lodging_note}.",)
CHECK_OUT_TEMPLATES = (
    "Eric checked out of {place}{in} and noted that {lodging_feedback} for next time.",
    "Last morning at {place}{in}; Eric noted that {lodging_feedback}.",
)
TRIP_CITY_TEMPLATES = (
    "Eric noticed that most small shops in {city} close early on Sundays.",
    "Eric and {companion} walked for hours around {city} today, over {steps} steps by the evening.",
    "Eric bought a transit card on the first full day in {city}; it saved a lot of hassle.",
    "Eric wants to come back to {city} in a different season with {companion}.",
    "Eric noted that tipping customs in {city} confused him at first.",
)
ONE_OFF_PERSON_TEMPLATES = (
    "At {place}{in}, {role} named {one_off} talked Eric into {item}.",
    "{Role} named {one_off} at {place}{in} recommended {item}, and Eric liked it.",
)
ONE_OFF_SHOP_TEMPLATES = (
    "Eric stopped into {one_off}, {shop_kind}, and came out with {shop_item}.",
    "Eric walked past {one_off}, {shop_kind}, and bought {shop_item} on a whim.",
)
PEOPLE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "pet": (
        "{Pet} had a checkup at the vet and weighs {weight} pounds; the vet wants him a little leaner.",
        "{Pet} chewed through another squeaky toy, so Eric wants to find sturdier ones.",
        "Eric noticed {pet} refuses to walk when the pavement is hot, so walks moved to before 8am.",
        "{Pet} got a bath and a nail trim and sulked for the rest of the afternoon.",
        "Eric is thinking about a second dog as company for {pet}.",
        "{Pet} learned to ring the bell by the back door when he wants out.",
    ),
    "joao": (
        "{Joao} came over and cooked feijoada for Eric and {lena}.",
        "{Joao} sent Eric his pão de queijo recipe, which uses tapioca flour and a lot of cheese.",
        "{Joao} is planning a pop-up dinner series and asked Eric to help with the menu cards.",
        "Eric helped {joao} test dishes for the pop-up; the grilled octopus was the standout.",
        "{Joao} told Eric the pop-up sold out its first weekend.",
    ),
    "lena": (
        "{Lena} prefers window seats on flights and always packs her own snacks.",
        "Eric and {lena} spent Sunday reorganising the garage.",
        "{Lena} has a big site visit this week, so Eric is handling dinners.",
        "{Lena}'s birthday is in early October; she has hinted at a quiet weekend away.",
    ),
    "sam": (
        "Eric and {sam} ran {distance} miles along the river before work.",
        "{Sam} is training for a triathlon and keeps trying to get Eric into open-water swimming.",
        "{Sam} lent Eric a foam roller after Eric complained about tight calves.",
    ),
    "ruth": (
        "Eric called his mother {ruth}; her knee is healing well after the surgery.",
        "{Ruth} is visiting {city} next month and wants to see the bluebonnets.",
        "Eric set up a video call for {ruth} so she can see {pet} more often.",
    ),
}
WORK_TEMPLATES = (
    "{Priya} asked Eric to take over the {work_thing} for {atlas}.",
    "Eric spent most of the day on {atlas}, {work_activity}; {work_note}.",
    "In his weekly one-on-one, {priya} and Eric talked about the {work_thing}; {work_note}.",
    "Eric presented the {atlas} roadmap and {priya} wants a tighter scope for the next milestone.",
    "Eric blocks mornings before 10am for deep work and declines meetings in that window.",
    "{Atlas} slipped a week because of the {work_thing}; Eric thinks {work_note_short}.",
    "Eric ran the {work_thing} for {atlas} on {weekday} afternoon; {work_note}.",
)
SF_WORK_TEMPLATES = (
    "The {atlas} offsite in {city} ran long; {priya} wants a written plan by Friday.",
    "{Priya} and Eric whiteboarded the {atlas} launch sequence{in}.",
)
MISC_LINES = (
    ("Eric prefers aisle seats on short flights and window seats on long ones.", ("travel", "preferences")),
    ("Eric is allergic to cashews; he always asks about them at restaurants.", ("health", "food")),
    ("Eric is trying to drink more water and keeps a bottle on his desk.", ("health",)),
    ("Eric likes his steak medium rare and his coffee black.", ("food", "preferences")),
    ("Eric wants to read more fiction this year and started a list.", ("books",)),
    ("Eric's sleep has been better since he stopped looking at his phone in bed.", ("health",)),
    ("Eric replaced the porch light with a motion sensor one.", ("home",)),
    ("Eric is saving for a new road bike and set a budget of two thousand dollars.", ("cycling", "money")),
)

REACTIONS = (
    "he wants to come back soon", "it was a bit too salty this time", "he called it the best meal of the month",
    "the service was slow but friendly", "he would skip dessert next time", "the line moved faster than expected",
    "he took half of it home for later", "the patio was packed",
)
VERDICTS = (
    "loved it", "thought it was a little overpriced", "said he would order it again",
    "rated it a solid eight out of ten", "thought the portions had gotten smaller", "said it was worth the wait",
)
CAFE_NOTES = (
    "the wifi was unreliable again", "he likes that it is quiet before nine", "it was too crowded to find an outlet",
    "the barista remembered his order", "he prefers the table by the window",
)
ERRANDS = ("a morning of meetings", "the farmers market", "a dentist appointment", "a haircut", "the train station")
PARK_NOTES = (
    "the water was cold but perfect", "it was packed with families", "the trail was muddy after the rain",
    "he spotted a heron by the water", "they stayed until sunset",
)
PET_NOTES = ("he slept the whole evening after", "he made three new friends", "he refused to leave the water")
WEATHER = ("it was already humid at seven", "a cool breeze for once", "light rain the whole way")
LODGING_NOTES = (
    "the room faces the street and is louder than expected", "the bed is great and the shower is tiny",
    "the front desk upgraded the room", "breakfast is included and worth getting up for",
)
LODGING_FEEDBACK = (
    "a quieter room on a higher floor is worth asking for", "late checkout was easy to get",
    "the neighbourhood was perfect for walking",
)
WORK_THINGS = ("quarterly roadmap review", "hiring loop", "vendor evaluation", "launch checklist")
WORK_ACTIVITIES = ("mostly in design reviews", "untangling the data migration", "writing the spec")
WORK_NOTES = (
    "he feels the team is finally aligned", "he is worried about the deadline", "it went better than expected",
    "he wants fewer meetings next week",
)
WORK_NOTES_SHORT = ("the new date is realistic", "the team needs more help", "scope has to shrink")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday")
# fmt: on


# --------------------------------------------------------------------------- composing memories


@dataclass
class _Draft:
    """One memory before it gets its id and time."""

    content: str = ""
    entities: list[dict[str, Any]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    place: dict[str, Any] | None = None
    journal: Trip | None = None


@dataclass(frozen=True)
class _Clause:
    """A piece of a sentence that may name entities, e.g. " with {person}"."""

    template: str
    slots: dict[str, Any]


class _Composer:
    """Renders templates into drafts, choosing how each recurring name is written this time."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.mentions: Counter[str] = Counter()

    def render(self, draft: _Draft, template: str, slots: dict[str, Any]) -> str:
        """Fill `template`; entity slots add the entity to the draft, in the order the text names them.

        A slot written with a capital first letter ("{Pet}") capitalises its value at a sentence start.
        """
        parts: list[str] = []
        for literal, slot, _, _ in string.Formatter().parse(template):
            parts.append(literal)
            if slot is None:
                continue
            value = self._slot_text(draft, slots[slot.lower()])
            parts.append(value[:1].upper() + value[1:] if slot[:1].isupper() else value)
        return "".join(parts)

    def _slot_text(self, draft: _Draft, value: Any) -> str:
        if isinstance(value, EntitySpec):
            return self.mention(draft, value)
        if isinstance(value, _Clause):
            return self.render(draft, value.template, value.slots)
        return str(value)

    def mention(self, draft: _Draft, spec: EntitySpec) -> str:
        written, how = spec.written_form(self.mentions[spec.name])
        self.mentions[spec.name] += 1
        entity = spec.entity(written, how)
        if entity not in draft.entities:
            draft.entities.append(entity)
        draft.tags.extend(spec.tags)
        if isinstance(spec, Place) and draft.place is None:
            # The place is recorded as the memory writes it; the city is the canonical one, as a
            # geocoder would give it.
            draft.place = {
                "name": written,
                "city": spec.city.name,
                "address": spec.address,
                "types": list(spec.types),
            }
        return written

    def pick(self, options: tuple[Any, ...]) -> Any:
        return options[self.rng.randrange(len(options))]


def _optional(rng: random.Random, probability: float, clause: _Clause) -> _Clause | str:
    return clause if rng.random() < probability else ""


def _place_draft(
    composer: _Composer, place: Place, *, trip: Trip | None, companion: EntitySpec | None, city_chance: float
) -> _Draft:
    rng = composer.rng
    draft = _Draft(journal=trip)
    with_clause = _Clause(" with {person}", {"person": companion}) if companion else ""
    slots: dict[str, Any] = {
        "place": place,
        "with": with_clause,
        "in": _optional(rng, city_chance, _Clause(" in {city}", {"city": place.city})),
        "item": composer.pick(place.items),
        "reaction": composer.pick(REACTIONS),
        "verdict": composer.pick(VERDICTS),
        "wait": rng.choice((15, 20, 30, 45, 90)),
        "cafe_note": composer.pick(CAFE_NOTES),
        "errand": composer.pick(ERRANDS),
        "park_note": composer.pick(PARK_NOTES),
        "pet_note": composer.pick(PET_NOTES),
        "weather": composer.pick(WEATHER),
        "lodging_note": composer.pick(LODGING_NOTES),
        "pet": PEOPLE["pet"],
        "lena": PEOPLE["lena"],
        "ruth": PEOPLE["ruth"],
    }
    draft.content = composer.render(draft, _place_template(composer, place, trip), slots)
    return draft


def _place_template(composer: _Composer, place: Place, trip: Trip | None) -> str:
    if "lodging" in place.types:
        return composer.pick(HOME_HOTEL_TEMPLATES if trip is None else HOTEL_MID_TEMPLATES)
    if "park" in place.types:
        at_home_with_dog = trip is None and composer.rng.random() < 0.5
        return composer.pick(DOG_PARK_TEMPLATES if at_home_with_dog else PARK_TEMPLATES)
    if "cafe" in place.types:
        return composer.pick(CAFE_TEMPLATES)
    return composer.pick(RESTAURANT_TEMPLATES)


def _hotel_draft(composer: _Composer, trip: Trip, templates: tuple[str, ...]) -> _Draft:
    draft = _Draft(journal=trip)
    slots = {
        "place": trip.hotel,
        "in": _Clause(" in {city}", {"city": trip.city}),
        "companion": PEOPLE[trip.companion_key],
        "lodging_note": composer.pick(LODGING_NOTES),
        "lodging_feedback": composer.pick(LODGING_FEEDBACK),
    }
    draft.content = composer.render(draft, composer.pick(templates), slots)
    return draft


def _trip_city_draft(composer: _Composer, trip: Trip) -> _Draft:
    draft = _Draft(journal=trip)
    if trip.companion_key == "priya":
        template = composer.pick(SF_WORK_TEMPLATES)
    else:
        template = composer.pick(TRIP_CITY_TEMPLATES)
    slots = {
        "city": trip.city,
        "in": _Clause(" in {city}", {"city": trip.city}),
        "companion": PEOPLE[trip.companion_key],
        "priya": PEOPLE["priya"],
        "atlas": ATLAS,
        "steps": f"{composer.rng.randrange(18, 31)},000",
    }
    draft.content = composer.render(draft, template, slots)
    return draft


def _people_draft(composer: _Composer) -> _Draft:
    key = composer.pick(("pet", "pet", "pet", "joao", "joao", "lena", "lena", "sam", "ruth"))
    draft = _Draft()
    slots = {
        **PEOPLE,
        "city": AUSTIN,
        "weight": composer.rng.randrange(24, 31),
        "distance": composer.rng.randrange(4, 11),
    }
    draft.content = composer.render(draft, composer.pick(PEOPLE_TEMPLATES[key]), slots)
    return draft


def _work_draft(composer: _Composer) -> _Draft:
    draft = _Draft(tags=["work"])
    slots = {
        "priya": PEOPLE["priya"],
        "atlas": ATLAS,
        "work_thing": composer.pick(WORK_THINGS),
        "work_activity": composer.pick(WORK_ACTIVITIES),
        "work_note": composer.pick(WORK_NOTES),
        "work_note_short": composer.pick(WORK_NOTES_SHORT),
        "weekday": composer.pick(WEEKDAYS),
    }
    draft.content = composer.render(draft, composer.pick(WORK_TEMPLATES), slots)
    return draft


def _misc_draft(composer: _Composer) -> _Draft:
    line, tags = composer.pick(MISC_LINES)
    return _Draft(content=line, tags=list(tags))


def _storyline_draft(composer: _Composer, storyline: Storyline, line_index: int) -> _Draft:
    draft = _Draft()
    composer.mention(draft, storyline.entity)
    draft.content = storyline.lines[line_index]
    return draft


def _one_off_person_draft(
    composer: _Composer, name: str, place: Place, trip: Trip | None, city_chance: float
) -> _Draft:
    draft = _Draft(journal=trip)
    slots = {
        "place": place,
        "in": _optional(composer.rng, city_chance, _Clause(" in {city}", {"city": place.city})),
        "role": composer.pick(ONE_OFF_ROLES),
        "one_off": name,
        "item": composer.pick(place.items),
    }
    draft.content = composer.render(draft, composer.pick(ONE_OFF_PERSON_TEMPLATES), slots)
    draft.entities.append({"name": name, "type": "entity", "kind": "person"})
    draft.tags.append("people")
    return draft


def _one_off_shop_draft(composer: _Composer, name: str, kind: str, item: str, trip: Trip | None) -> _Draft:
    draft = _Draft(journal=trip, tags=["shopping"])
    article = "an" if kind[:1] in "aeiou" else "a"
    slots = {"one_off": name, "shop_kind": f"{article} {kind}", "shop_item": item}
    draft.content = composer.render(draft, composer.pick(ONE_OFF_SHOP_TEMPLATES), slots)
    draft.entities.append({"name": name, "type": "entity", "kind": kind})
    return draft


# --------------------------------------------------------------------------- the calendar


def _calendar() -> list[tuple[date, float, Trip | None]]:
    """Every day of the span with its weight (how much Eric writes) and the trip he is on, if any."""
    days = []
    day = FIRST_DAY
    while day <= LAST_DAY:
        trip = next((t for t in TRIPS if t.first_day <= day <= t.last_day), None)
        days.append((day, TRIP_DAY_WEIGHT if trip else 1.0, trip))
        day += timedelta(days=1)
    return days


def _timeline(rng: random.Random, memories: int) -> list[tuple[datetime, Trip | None]]:
    """Strictly increasing times over the nine months, denser on trip days, and the trip of each."""
    days = _calendar()
    total = sum(weight for _, weight, _ in days)
    timeline: list[tuple[datetime, Trip | None]] = []
    day_index, day_start = 0, 0.0
    for index in range(memories):
        # Jitter stays inside +-0.4 of a slot, so consecutive memories are always in order.
        position = (index + 0.5 + 0.8 * (rng.random() - 0.5)) / memories * total
        while day_start + days[day_index][1] <= position:
            day_start += days[day_index][1]
            day_index += 1
        day, weight, trip = days[day_index]
        seconds = int((position - day_start) / weight * DAY_SPAN_SECONDS)
        moment = datetime(day.year, day.month, day.day, DAY_START_HOUR, tzinfo=UTC) + timedelta(
            seconds=seconds
        )
        timeline.append((moment, trip))
    return timeline


# --------------------------------------------------------------------------- the plan of who appears where


def _bursts(rng: random.Random, pool: tuple[Place, ...], slots: int, sizes: tuple[int, int]) -> list[Place]:
    """Places for `slots` consecutive visits: each place comes in a burst of a few visits close
    together, with up to three bursts interleaved, cycling through the whole pool in shuffled order."""
    order: list[Place] = []
    open_bursts: list[list[Any]] = []
    visits: list[Place] = []
    for _ in range(slots):
        while len(open_bursts) < 3:
            if not order:
                order = list(pool)
                rng.shuffle(order)
            open_bursts.append([order.pop(), rng.randint(*sizes)])
        burst = open_bursts[rng.randrange(len(open_bursts))]
        visits.append(burst[0])
        burst[1] -= 1
        if burst[1] == 0:
            open_bursts.remove(burst)
    return visits


def _first_index_on_or_after(timeline: list[tuple[datetime, Trip | None]], day: date) -> int:
    return next((i for i, (moment, _) in enumerate(timeline) if moment.date() >= day), len(timeline))


def _schedule_decisions(
    timeline: list[tuple[datetime, Trip | None]], reserved: dict[int, tuple[Storyline, int]]
) -> None:
    for storyline in DECISIONS:
        for line_index, offset in enumerate(storyline.day_offsets):
            index = _first_index_on_or_after(timeline, FIRST_DAY + timedelta(days=offset))
            while index < len(timeline) and (index in reserved or timeline[index][1] is not None):
                index += 1
            if index < len(timeline):
                reserved[index] = (storyline, line_index)


def _schedule_rare_names(
    rng: random.Random,
    timeline: list[tuple[datetime, Trip | None]],
    reserved: dict[int, tuple[Storyline, int]],
) -> None:
    """Each rare name's mentions are more than a batch apart, all at home; a name that cannot fit
    (a small corpus) is left out rather than squeezed into one batch."""
    memories = len(timeline)
    for storyline in RARE_NAMES:
        mentions = len(storyline.lines)
        for _ in range(50):
            gaps = [rng.randint(RARE_NAME_MIN_GAP, RARE_NAME_MAX_GAP) for _ in range(mentions - 1)]
            span = sum(gaps)
            if span >= memories:
                break
            start = rng.randrange(memories - span)
            positions = [start + sum(gaps[:k]) for k in range(mentions)]
            if all(p not in reserved and timeline[p][1] is None for p in positions):
                for line_index, position in enumerate(positions):
                    reserved[position] = (storyline, line_index)
                break


def _one_off_names(rng: random.Random) -> tuple[list[str], list[tuple[str, str, str]]]:
    people = [f"{first} {last}" for first in ONE_OFF_FIRST_NAMES for last in ONE_OFF_LAST_NAMES]
    shops = [
        (f"{prefix} {suffix}", kind, item)
        for prefix in ONE_OFF_SHOP_PREFIXES
        for suffix, kind, item in ONE_OFF_SHOP_KINDS
    ]
    rng.shuffle(people)
    rng.shuffle(shops)
    return people, shops


# --------------------------------------------------------------------------- the corpus


def generate_sample(memories: int, seed: int = 7) -> list[dict[str, Any]]:
    """`memories` rows in chronological order: {"content", "metadata", "occurred_at"}.

    Deterministic for (memories, seed): only `random.Random(seed)` is used, never the clock.
    """
    if memories < 0:
        raise ValueError("memories must be >= 0")
    rng = random.Random(seed)
    composer = _Composer(rng)
    timeline = _timeline(rng, memories)
    drafts = _drafts(rng, composer, timeline)
    return [
        _row(seed, index, moment, draft, rng)
        for index, ((moment, _), draft) in enumerate(zip(timeline, drafts, strict=True))
    ]


def _drafts(
    rng: random.Random, composer: _Composer, timeline: list[tuple[datetime, Trip | None]]
) -> list[_Draft]:
    storylines: dict[int, tuple[Storyline, int]] = {}
    _schedule_decisions(timeline, storylines)
    _schedule_rare_names(rng, timeline, storylines)
    trip_bounds = _trip_bounds(timeline)
    one_off_slots = _one_off_slots(rng, len(timeline), storylines, trip_bounds)
    people, shops = _one_off_names(rng)

    home_places = _home_place_plan(rng, timeline, storylines, one_off_slots)
    trip_visits = Counter(trip.journal_id for _, trip in timeline if trip is not None)
    trip_places = {
        trip.journal_id: iter(
            _bursts(rng, (trip.places[0], *trip.places), trip_visits[trip.journal_id], (2, 3))
        )
        for trip in TRIPS
    }
    drafts: list[_Draft] = []
    for index, (_, trip) in enumerate(timeline):
        if index in storylines:
            storyline, line_index = storylines[index]
            drafts.append(_storyline_draft(composer, storyline, line_index))
        elif trip is not None and index == trip_bounds[trip.journal_id][0]:
            drafts.append(_hotel_draft(composer, trip, CHECK_IN_TEMPLATES))
        elif trip is not None and index == trip_bounds[trip.journal_id][1]:
            drafts.append(_hotel_draft(composer, trip, CHECK_OUT_TEMPLATES))
        elif index in one_off_slots:
            drafts.append(_one_off_draft(composer, trip, people, shops))
        elif trip is not None:
            drafts.append(_trip_draft(composer, trip, next(trip_places[trip.journal_id])))
        else:
            drafts.append(_home_draft(composer, home_places.get(index)))
    return drafts


def _trip_bounds(timeline: list[tuple[datetime, Trip | None]]) -> dict[str, tuple[int, int]]:
    bounds: dict[str, tuple[int, int]] = {}
    for index, (_, trip) in enumerate(timeline):
        if trip is not None:
            first, _ = bounds.get(trip.journal_id, (index, index))
            bounds[trip.journal_id] = (first, index)
    return bounds


def _one_off_slots(
    rng: random.Random, memories: int, taken: dict[int, Any], trip_bounds: dict[str, tuple[int, int]]
) -> set[int]:
    ends = {i for bounds in trip_bounds.values() for i in bounds}
    free = [i for i in range(memories) if i not in taken and i not in ends]
    wanted = min(len(free), round(memories * ONE_OFF_SHARE))
    return set(rng.sample(free, wanted))


def _home_place_plan(
    rng: random.Random,
    timeline: list[tuple[datetime, Trip | None]],
    taken: dict[int, Any],
    one_off_slots: set[int],
) -> dict[int, Place | None]:
    """Which home memories are place visits, and where: favourites any time, the rest in bursts.

    Home memories that are not visits map to None (people, work and other notes)."""
    home = [
        i
        for i, (_, trip) in enumerate(timeline)
        if trip is None and i not in taken and i not in one_off_slots
    ]
    visits = [i for i in home if rng.random() < HOME_VISIT_SHARE]
    favourites = [place for place, _ in AUSTIN_FAVOURITES]
    favourite_weights = [weight for _, weight in AUSTIN_FAVOURITES]
    plan: dict[int, Place | None] = dict.fromkeys(home)
    rotation_slots = []
    for index in visits:
        if rng.random() < CORE_PLACE_SHARE:
            plan[index] = rng.choices(favourites, favourite_weights)[0]
        else:
            rotation_slots.append(index)
    for index, place in zip(
        rotation_slots, _bursts(rng, AUSTIN_ROTATION, len(rotation_slots), (2, 4)), strict=True
    ):
        plan[index] = place
    return plan


def _home_draft(composer: _Composer, place: Place | None) -> _Draft:
    if place is not None:
        companion = PEOPLE[composer.pick(DINING_COMPANIONS)] if composer.rng.random() < 0.3 else None
        return _place_draft(composer, place, trip=None, companion=companion, city_chance=0.1)
    kind = composer.rng.choices(list(HOME_NOTE_WEIGHTS), list(HOME_NOTE_WEIGHTS.values()))[0]
    if kind == "people":
        return _people_draft(composer)
    if kind == "work":
        return _work_draft(composer)
    return _misc_draft(composer)


def _trip_draft(composer: _Composer, trip: Trip, place: Place) -> _Draft:
    roll = composer.rng.random()
    if roll < 0.12:
        return _trip_city_draft(composer, trip)
    if roll < 0.16:
        return _place_draft(composer, trip.hotel, trip=trip, companion=None, city_chance=0.3)
    companion = PEOPLE[trip.companion_key] if composer.rng.random() < 0.25 else None
    return _place_draft(composer, place, trip=trip, companion=companion, city_chance=0.35)


def _one_off_draft(
    composer: _Composer,
    trip: Trip | None,
    people: list[str],
    shops: list[tuple[str, str, str]],
) -> _Draft:
    if composer.rng.random() < 0.5 and people:
        if trip is None:
            place = composer.pick(tuple(p for p in AUSTIN_ROTATION if "restaurant" in p.types))
        else:
            place = composer.pick(tuple(p for p in trip.places if "restaurant" in p.types))
        return _one_off_person_draft(composer, people.pop(), place, trip, 0.3 if trip else 0.0)
    name, kind, item = shops.pop()
    return _one_off_shop_draft(composer, name, kind, item, trip)


def _row(seed: int, index: int, moment: datetime, draft: _Draft, rng: random.Random) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if draft.entities:
        metadata["entities"] = draft.entities
    if draft.place is not None:
        metadata["place"] = draft.place
    trip_tags: tuple[str, ...] = ()
    if draft.journal is not None:
        metadata["journal"] = {"id": draft.journal.journal_id, "title": draft.journal.title}
        trip_tags = draft.journal.tags
    tags = list(dict.fromkeys([*draft.tags, *trip_tags]))
    if tags and rng.random() >= UNTAGGED_SHARE:
        metadata["tags"] = tags
    # No "id": retain derives one from the scope, the content and the time, so the same sample can
    # be retained into several scopes (two tenants with identical wikis is a test we run).
    return {
        "content": draft.content,
        "metadata": metadata,
        "occurred_at": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


# --------------------------------------------------------------------------- writing JSONL


def write_sample_jsonl(path_or_stream: str | PathLike[str] | TextIO, memories: int, seed: int = 7) -> int:
    """Write the corpus as UTF-8 JSON lines to a path or an open text stream; returns the row count."""
    rows = generate_sample(memories, seed)
    lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if isinstance(path_or_stream, str | PathLike):
        with open(path_or_stream, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(lines)
    else:
        path_or_stream.write(lines)
    return len(rows)


def main_write(out: str, memories: int, seed: int = 7) -> int:
    """CLI entry: write the corpus to `out`, or to stdout when `out` is "-"."""
    return write_sample_jsonl(sys.stdout if out == "-" else out, memories, seed)
