"""Reports: PNG plots now; the HTML report slots in here later."""
