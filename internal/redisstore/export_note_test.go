package redisstore

import "github.com/socialgw/gateway/internal/social"

// PackNote is the NoteData value of notification n of group, with its
// window (lo, hi, hwm; empty for one keeping its actors), as the note
// record packs it.
func PackNote(n social.Notification, group, lo, hi, hwm string) string {
	return noteRecord.pack(&noteRow{note: n, group: group, lo: lo, hi: hi, hwm: hwm})
}

// NoteFields are the note record's field names, in their order.
func NoteFields() []string { return noteRecord.names(nil) }
