package tokens

// Fixture is fixture for the package's external tests.
var Fixture = fixture

// Preload is preload for the package's external tests.
var Preload = preload
