package redisstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// TestNoteRecordPacks: a notification packs to the NoteData value the
// note scripts write (five fields for one keeping its actors, eight for
// one read from its source), and unpacks to the same row; a value of
// five fields has no window.
func TestNoteRecordPacks(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123).UTC()
	for _, tc := range []struct {
		name string
		row  noteRow
		want string
	}{
		{"comment", noteRow{note: social.Notification{Kind: social.NoteComment, PostID: "5", CommentID: "9", UpdatedAt: at}, group: "comment:9"},
			"COMMENT|5|9|1700000000123|comment:9"},
		{"follow", noteRow{note: social.Notification{Kind: social.NoteFollow, UpdatedAt: at}, group: "follow"},
			"FOLLOW|||1700000000123|follow"},
		{"like window, open-ended", noteRow{note: social.Notification{Kind: social.NoteLike, PostID: "5", UpdatedAt: at}, group: "like:5", lo: "100", hwm: "120"},
			"LIKE|5||1700000000123|like:5|100||120"},
		{"like window, ended", noteRow{note: social.Notification{Kind: social.NoteLike, PostID: "5", UpdatedAt: at}, group: "like:5", lo: "100", hi: "150", hwm: "140"},
			"LIKE|5||1700000000123|like:5|100|150|140"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := noteRecord.pack(&tc.row); got != tc.want {
				t.Errorf("packed %q, want %q", got, tc.want)
			}
			var got noteRow
			noteRecord.unpack(&got, tc.want)
			if !reflect.DeepEqual(got, tc.row) {
				t.Errorf("unpacked %+v\nwant     %+v", got, tc.row)
			}
		})
	}
	if err := noteRecord.check(); err != nil {
		t.Error(err)
	}
	var short noteRow
	if n := noteRecord.unpack(&short, "MENTION|5||1|mention:5"); n != 5 || short.lo != "" || short.note.Kind != social.NoteMention {
		t.Errorf("a five-field value unpacked to %d fields, %+v", n, short)
	}
}
