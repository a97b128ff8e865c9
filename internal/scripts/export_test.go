package scripts

// Compose makes a script from a test's own Lua, as the embedded ones are.
var Compose = compose
