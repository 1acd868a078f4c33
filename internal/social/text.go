package social

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText checks user-written text (a post, a comment, a bio): valid
// UTF-8, no control characters but newline and tab, no bidirectional
// embedding, override or isolate characters, and min to max characters
// (code points) once surrounding white space is trimmed. Text made only of
// characters that render as nothing (white space, zero-width and other
// default-ignorable characters, fillers such as U+3164 and U+2800) is
// empty. what names the field in the error.
func CleanText(s, what string, min, max int) (string, error) {
	if !utf8.ValidString(s) {
		return "", Errorf(BadUserInput, "%s is not valid UTF-8", what)
	}
	s = strings.TrimFunc(s, trimmable)
	visible := false
	for _, r := range s {
		switch {
		case unicode.IsControl(r) && r != '\n' && r != '\t':
			return "", Errorf(BadUserInput, "%s must not contain control characters", what)
		case bidiControl(r):
			// An override makes "gpj.exe" display as "exe.jpg" and an
			// unclosed one reorders whatever the client renders next to
			// the text; marks (U+200E/U+200F) stay allowed.
			return "", Errorf(BadUserInput, "%s must not contain bidirectional override or isolate characters", what)
		case !visible && !invisible(r):
			visible = true
		}
	}
	if !visible {
		if min > 0 {
			return "", Errorf(BadUserInput, "%s must not be empty (white space and invisible characters do not count)", what)
		}
		return "", nil
	}
	if n := utf8.RuneCountInString(s); n < min || n > max {
		if min > 0 {
			return "", Errorf(BadUserInput, "%s must be %d to %d characters", what, min, max)
		}
		return "", Errorf(BadUserInput, "%s must be at most %d characters", what, max)
	}
	return s, nil
}

// trimmable is what CleanText cuts from both ends: white space and the
// zero-width spaces and joiners. Variation selectors and tag characters
// are not cut: at the end of text they belong to the emoji before them.
func trimmable(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r)
}

// invisible reports a character that renders as nothing on its own: white
// space, format characters (Cf: soft hyphen, zero-width characters, bidi
// marks, tag characters), the other default-ignorable code points (Hangul
// fillers U+115F, U+1160, U+3164, U+FFA0 and their kin), variation
// selectors, and the blank braille pattern U+2800. Text made only of these
// looks empty.
func invisible(r rune) bool {
	switch {
	case r == '\u2800':
		return true
	case r < 0x80:
		return unicode.IsSpace(r)
	}
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		r == '\u115f' || r == '\u1160' || r == '\u3164' || r == '\uffa0'
}

// bidiControl reports the bidirectional embedding, override and isolate
// characters (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI).
func bidiControl(r rune) bool {
	return '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069'
}
