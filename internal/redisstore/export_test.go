package redisstore

import "time"

// LuaSource exposes the embedded scripts to the script tests.
var LuaSource = luaSource

// ScriptSources are the full sources of the store's scripts by file name.
var ScriptSources = scriptSources

// SetClock replaces the store's clock.
func (s *Store) SetClock(now func() time.Time) { s.now = now }
