"""Person names the person-keyed domains draw record names from."""

FIRST_NAMES = ("Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas")
LAST_NAMES = ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak", "Haddad", "Kowalski")
