package social

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Hashtags and user-search prefixes: the one rule of what a tag is, for
// the tags a post's content carries (Post.tags, the tag indexes) and the
// tag a reader asks for (tagTimeline).

const (
	// MaxTags bounds the tags one post is indexed under: the write work
	// of a post stays bounded, as MaxMentions bounds its notifications.
	MaxTags = 10
	// MaxTagLen is the longest tag, in characters; a longer run after #
	// is no tag.
	MaxTagLen = 100
	// MaxSearchPrefix is the longest user-search prefix, in characters:
	// longer than any name or display name.
	MaxSearchPrefix = 50
)

// folder case-folds tags and search prefixes. cases.Caser keeps state, so
// each call takes a fresh one (cheap: a small struct).
func fold(s string) string { return cases.Fold().String(norm.NFC.String(s)) }

// tagRune reports a character a tag is made of: a Unicode letter (with
// the combining marks that belong to it), a decimal digit, or _.
func tagRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

// Tags returns the hashtags of text: each #word, where word is a run of
// letters, digits and _ holding at least one letter or _ (so #1 is no
// tag), at most MaxTagLen characters, case-folded (Unicode case folding
// after NFC), without #, in order of first use, at most MaxTags. A # that
// follows a tag character, #, / or ) starts none (a#b, an anchor in a
// link), as on Mastodon.
func Tags(text string) []string {
	var out []string
	prev := rune(-1) // the character before i; -1 at the start
	for i := 0; i < len(text) && len(out) < MaxTags; {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r != '#' || tagRune(prev) || strings.ContainsRune("#/)", prev) {
			prev = r
			continue
		}
		j := i
		for j < len(text) {
			c, n := utf8.DecodeRuneInString(text[j:])
			if !tagRune(c) {
				break
			}
			j += n
		}
		if tag, ok := checkTag(text[i:j]); ok && !slices.Contains(out, tag) {
			out = append(out, tag)
		}
		prev, _ = utf8.DecodeLastRuneInString(text[:j])
		i = j
	}
	return out
}

// checkTag folds a run of tag characters and says whether it is a tag.
func checkTag(word string) (string, bool) {
	n := utf8.RuneCountInString(word)
	if n == 0 || n > MaxTagLen {
		return "", false
	}
	if strings.IndexFunc(word, func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
		return "", false
	}
	return fold(word), true
}

// ValidateTag checks the tag a reader asks for (tagTimeline): with or
// without a leading #, made of tag characters as Tags reads them, 1 to
// MaxTagLen characters. It returns the folded tag, which the indexes use.
func ValidateTag(tag string) (string, error) {
	tag = strings.TrimPrefix(strings.TrimSpace(tag), "#")
	switch n := utf8.RuneCountInString(tag); {
	case !utf8.ValidString(tag):
		return "", Errorf(BadUserInput, "tag is not valid UTF-8")
	case n == 0:
		return "", Errorf(BadUserInput, "tag must not be empty")
	case n > MaxTagLen:
		return "", Errorf(BadUserInput, "tag must be at most %d characters", MaxTagLen)
	case strings.IndexFunc(tag, func(r rune) bool { return !tagRune(r) }) >= 0:
		return "", Errorf(BadUserInput, "a tag holds only letters, digits and _")
	}
	folded, ok := checkTag(tag)
	if !ok {
		return "", Errorf(BadUserInput, "a tag needs a letter or _")
	}
	return folded, nil
}

// ValidateSearchPrefix checks a user-search prefix: trimmed, with or
// without a leading @, 1 to MaxSearchPrefix characters, no control
// characters. It returns the prefix folded as SearchKey folds names.
func ValidateSearchPrefix(prefix string) (string, error) {
	prefix = strings.TrimPrefix(strings.TrimSpace(prefix), "@")
	switch n := utf8.RuneCountInString(prefix); {
	case !utf8.ValidString(prefix):
		return "", Errorf(BadUserInput, "prefix is not valid UTF-8")
	case n == 0:
		return "", Errorf(BadUserInput, "prefix must not be empty")
	case n > MaxSearchPrefix:
		return "", Errorf(BadUserInput, "prefix must be at most %d characters", MaxSearchPrefix)
	case strings.IndexFunc(prefix, unicode.IsControl) >= 0:
		return "", Errorf(BadUserInput, "prefix must not contain control characters")
	}
	return SearchKey(prefix), nil
}

// SearchKey is the form a name or display name is indexed under for user
// search, and a prefix is matched in: Unicode case folding after NFC, so
// a prefix matches whatever case either is written in.
func SearchKey(s string) string { return fold(s) }

// Tags are the hashtags of the post's content (Tags): derived from the
// content whenever it is read, so an edit changes them with the text.
func (p *Post) Tags() []string {
	if tags := Tags(p.Content); tags != nil {
		return tags
	}
	return []string{}
}

// TagTrend is one tag of the trend ranking: its uses (posts) and the
// distinct users who used it within the trend window.
type TagTrend struct {
	Tag      string
	Uses     int
	Accounts int
}
