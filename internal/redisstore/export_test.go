package redisstore

// LuaSource exposes the embedded scripts to the script tests.
var LuaSource = luaSource

// ScriptSources are the full sources of the store's scripts by file name.
var ScriptSources = scriptSources
