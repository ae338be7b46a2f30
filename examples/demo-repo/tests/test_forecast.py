import unittest

from forecast import lookup


class LookupTest(unittest.TestCase):
    def test_known_city_is_case_insensitive(self):
        self.assertEqual(lookup("PARIS")["sky"], "rain")

    def test_unknown_city(self):
        self.assertEqual(lookup("Atlantis")["sky"], "unknown")


if __name__ == "__main__":
    unittest.main()
