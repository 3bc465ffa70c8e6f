"""The name pools the adversarial corpus draws from, each seed drawing different names.

Every pool holds names for one role in the corpus (a home city, a restaurant, a pair of names that
must stay two pages, ...). A seed picks from each pool, so a corpus of another seed has other names
and other typos: figures tuned on one seed are checked on names the ladder never saw.
"""

from __future__ import annotations

# (city, state, state code): a home city that is also a first name, so a friend can share it.
HOME_CITIES = (
    ("Austin", "Texas", "TX"),
    ("Savannah", "Georgia", "GA"),
    ("Madison", "Wisconsin", "WI"),
    ("Dallas", "Texas", "TX"),
    ("Charlotte", "North Carolina", "NC"),
    ("Jackson", "Mississippi", "MS"),
)

RESTAURANTS = (
    "Suerte", "Odd Duck", "Launderette", "Dai Due", "Nixta Taqueria", "Emmer & Rye", "Comedor",
    "Olamaie", "Intero", "Birdie's", "Bufalina", "Kemuri Tatsu-ya", "Veracruz All Natural",
    "Franklin Barbecue", "Matt's El Rancho", "Home Slice Pizza", "Sour Duck Market", "Fonda San Miguel",
    "Justine's Brasserie", "Salty Sow", "Lenoir", "Thai Kun",
)
CAFES = (
    "Epoch Coffee", "Houndstooth Coffee", "Merit Coffee", "Summer Moon", "Cuvee Coffee", "Flitch Coffee",
    "Figure 8 Coffee", "Radio Coffee", "Medici Roasting",
)
PARKS = (
    "Zilker Park", "Mueller Lake Park", "Mount Bonnell", "Red Bud Isle", "Pease Park", "Walnut Creek Park",
    "Shoal Creek Trail", "Barton Creek Greenbelt",
)
# Two restaurants whose names differ by a few letters: one is not a variant of the other.
PREFIX_TRAPS = (
    ("Uchi", "Uchiko"), ("Nori", "Noriko"), ("Kome", "Komeya"), ("Tori", "Toriko"), ("Ama", "Amaya"),
    ("Sala", "Salazar"),
)
# A hotel and the bar inside it: the bar's name is the hotel's plus one word, and is another page.
SUBSET_TRAPS = (
    ("The Driskill", "The Driskill Bar"), ("The Roosevelt", "The Roosevelt Room"),
    ("The Jefferson", "The Jefferson Lounge"), ("The Siren", "The Siren Bar"),
    ("The Carlisle", "The Carlisle Tavern"),
)
# Venues people write with and without a leading article; the kind says what they are.
ARTICLE_VENUES = (
    ("Hotel San José", "hotel"), ("Broken Spoke", "bar"), ("Continental Club", "bar"),
    ("Elephant Room", "bar"), ("Peached Tortilla", "restaurant"), ("Grove Wine Bar", "bar"),
    ("Ivy Hotel", "hotel"), ("Greenhouse Cafe", "cafe"),
)
# A trip city, its country, its venues, and a town of the same name elsewhere (a road trip there).
TRIPS = (
    ("Paris", "France", (("Cafe de Flore", "cafe"), ("Le Comptoir du Relais", "restaurant"),
                         ("Jardin du Luxembourg", "park"), ("Hotel de Buci", "hotel")), ("Paris", "Texas")),
    ("London", "United Kingdom", (("Padella", "restaurant"), ("Monmouth Coffee", "cafe"),
                                  ("Hyde Park", "park"), ("Hoxton Holborn", "hotel")), ("London", "Ontario")),
    ("Athens", "Greece", (("Karamanlidika", "restaurant"), ("Little Tree Books", "cafe"),
                          ("National Garden", "park"), ("Hotel Grande Bretagne", "hotel")), ("Athens", "Georgia")),
    ("Dublin", "Ireland", (("Winding Stair", "restaurant"), ("Bewley's Cafe", "cafe"),
                           ("St Stephen's Green", "park"), ("Shelbourne Hotel", "hotel")), ("Dublin", "Ohio")),
    ("Rome", "Italy", (("Roscioli", "restaurant"), ("Sant'Eustachio", "cafe"), ("Villa Borghese", "park"),
                       ("Hotel Artemide", "hotel")), ("Rome", "Georgia")),
    ("Berlin", "Germany", (("Katz Orange", "restaurant"), ("Bonanza Coffee", "cafe"), ("Tiergarten", "park"),
                           ("Hotel Oderberger", "hotel")), ("Berlin", "Vermont")),
)
# Long first names that get a transposition typo ("Margeurite"), with the relation people write.
RELATIVES = (
    ("Marguerite", "sister"), ("Theodora", "aunt"), ("Beatrice", "sister"), ("Geraldine", "aunt"),
    ("Josephine", "cousin"), ("Frederick", "brother"), ("Cassandra", "cousin"), ("Penelope", "sister"),
    ("Rosalind", "neighbor"), ("Bernadette", "aunt"), ("Gwendolyn", "sister"), ("Maximilian", "brother"),
)
PARTNERS = ("Lena", "Priya", "Tomas", "Noor", "Ingrid", "Rafael")
COLLEAGUES = ("Okafor", "Delacroix", "Haruki", "Solveig", "Ramirez", "Whitfield")
PETS = (("Biscuit", "dog"), ("Pepper", "cat"), ("Waffles", "dog"), ("Mochi", "cat"), ("Juniper", "dog"),
        ("Noodle", "dog"), ("Pickles", "cat"), ("Clementine", "cat"))
PROJECTS = ("Project Atlas", "Project Halcyon", "Project Meridian", "Project Orca", "Project Lantern")
DECISIONS = (
    "Switch to a standing desk", "Start Spanish lessons", "Sell the second car", "Move the offsite to spring",
    "Adopt a weekly review", "Cancel the gym membership", "Book the anniversary dinner early",
)
ONE_OFF_NAMES = (
    "Dr. Alvarez", "Mr. Pemberton", "Quill & Ink", "Harbor Hardware", "Tilde Bakery", "Ms. Oyelaran",
    "Copperline Books", "Dr. Vasquez", "Starling Florist", "Mr. Abernathy",
)

# What people eat or do at each kind of venue.
ITEMS = {
    "restaurant": ("the tasting menu", "tacos al pastor", "the brisket plate", "a bowl of ramen", "the fish special",
                   "the roast chicken", "small plates to share"),
    "cafe": ("a flat white", "a cortado", "an iced coffee", "a pour-over", "a chai latte"),
    "park": ("a long walk", "a morning run", "a picnic", "frisbee on the lawn", "a swim"),
    "hotel": ("a night away", "drinks in the lobby", "a courtyard breakfast"),
    "bar": ("a mezcal flight", "an old fashioned", "live music", "a negroni"),
}
