package social

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText checks user-written text (a post, a comment, a bio): valid
// UTF-8, no control characters but newline and tab, and min to max
// characters (code points) once surrounding white space and invisible
// characters are trimmed, so that a post of only a zero-width space counts
// as empty. what names the field in the error.
func CleanText(s, what string, min, max int) (string, error) {
	if !utf8.ValidString(s) {
		return "", Errorf(BadUserInput, "%s is not valid UTF-8", what)
	}
	s = strings.TrimFunc(s, invisible)
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return "", Errorf(BadUserInput, "%s must not contain control characters", what)
		}
	}
	if n := utf8.RuneCountInString(s); n < min || n > max {
		if min > 0 {
			return "", Errorf(BadUserInput, "%s must be %d to %d characters", what, min, max)
		}
		return "", Errorf(BadUserInput, "%s must be at most %d characters", what, max)
	}
	return s, nil
}

// invisible reports white space and the zero-width characters that render
// as nothing.
func invisible(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r)
}
