"""The forecast table. Real data would come from a provider."""

FORECASTS = {
    "london": {"sky": "cloudy", "high_c": 14},
    "new york": {"sky": "sunny", "high_c": 22},
    "paris": {"sky": "rain", "high_c": 17},
}


def lookup(city):
    """Returns the forecast for `city`, or an 'unknown' marker."""
    return FORECASTS.get(city.lower(), {"sky": "unknown", "high_c": None})
