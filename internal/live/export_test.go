package live

// Slot exposes hashSlot to the tests, which check it against Redis.
var Slot = hashSlot

// MovedSlot exposes movedSlot to the tests.
var MovedSlot = movedSlot
