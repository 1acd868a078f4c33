package social

import (
	"net/mail"
	"strings"
	"unicode"
)

// The rules of account input: a user name and an e-mail address, as
// auth.Service checks them when an account is registered.

// MaxEmailLen is the longest e-mail address an account may have, in bytes.
const MaxEmailLen = 254

// ValidateName checks a user name: 3–30 of [A-Za-z0-9_].
func ValidateName(name string) error {
	if !IsName(name) {
		return Errorf(BadUserInput, "name must be 3 to 30 letters, digits or underscores")
	}
	return nil
}

// ValidateEmail checks a bare e-mail address (no display name). An
// address that differs from another only by invisible characters (zero
// width, bidirectional marks: Unicode format characters) or by letters of
// another script that look alike (a Cyrillic а in a Latin name) would be a
// second account that reads as the first: such addresses are refused.
func ValidateEmail(email string) error {
	a, err := mail.ParseAddress(email)
	at := strings.LastIndexByte(email, '@')
	if err != nil || a.Address != email || len(email) > MaxEmailLen || at < 1 || !strings.Contains(email[at:], ".") {
		return Errorf(BadUserInput, "email is not a valid e-mail address")
	}
	if spoofable(email) {
		return Errorf(BadUserInput, "email holds invisible characters or mixes alphabets that look alike")
	}
	return nil
}

// lookalikeScripts are the scripts whose letters pass for one another.
var lookalikeScripts = []*unicode.RangeTable{unicode.Latin, unicode.Cyrillic, unicode.Greek, unicode.Armenian, unicode.Cherokee}

// spoofable reports an e-mail address with a format character, or a part
// (the local part, each label of the domain) whose letters come from more
// than one of lookalikeScripts.
func spoofable(email string) bool {
	for _, part := range strings.FieldsFunc(email, func(r rune) bool { return r == '@' || r == '.' }) {
		script := -1
		for _, r := range part {
			if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
				return true
			}
			for i, t := range lookalikeScripts {
				if unicode.Is(t, r) {
					if script >= 0 && script != i {
						return true
					}
					script = i
				}
			}
		}
	}
	return false
}
