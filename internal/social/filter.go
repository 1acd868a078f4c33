package social

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Keyword filters: a user hides from themself the posts whose text holds
// a phrase, in the places (contexts) they chose, until the filter
// expires.

// FilterContext is a set of the places a filter applies in, one bit
// each.
type FilterContext uint8

// The places a filter applies in.
const (
	FilterHome          FilterContext = 1 << iota // the home timeline
	FilterLists                                   // lists' timelines
	FilterNotifications                           // notifications about a post
	FilterPublic                                  // users' and tags' pages
	FilterComments                                // comments below posts
	filterContextEnd
)

// AllFilterContexts are the contexts in the schema's order.
var AllFilterContexts = []FilterContext{FilterHome, FilterLists, FilterNotifications, FilterPublic, FilterComments}

// Has reports whether c holds every context of o.
func (c FilterContext) Has(o FilterContext) bool { return o != 0 && c&o == o }

// Valid reports whether c is a non-empty set of known contexts.
func (c FilterContext) Valid() bool { return c != 0 && c < filterContextEnd }

// Filter limits.
const (
	MaxFilters      = 100 // a user's filters
	MaxFilterPhrase = 100 // characters of a phrase
	// MaxFilterExpiry bounds expiresIn (ten years), so an expiry time
	// cannot overflow.
	MaxFilterExpiry = 10 * 365 * 24 * 3600
)

// Filter is one of a user's keyword filters.
type Filter struct {
	ID        string
	Phrase    string
	WholeWord bool
	Context   FilterContext
	ExpiresAt *time.Time // nil: never
}

// ActiveAt reports whether f still applies at now.
func (f *Filter) ActiveAt(now time.Time) bool {
	return f.ExpiresAt == nil || now.Before(*f.ExpiresAt)
}

// FilterInput is a filter as a client asks for it.
type FilterInput struct {
	Phrase    string
	WholeWord bool
	Context   FilterContext
	ExpiresIn *int // seconds; nil: never
}

// CheckFilter validates a new filter at now: a phrase of 1 to
// MaxFilterPhrase characters (CleanText's rules, normalized to NFC), at
// least one context, and an expiry in the future. The result has no id.
func CheckFilter(in FilterInput, now time.Time) (Filter, error) {
	phrase, err := CleanText(in.Phrase, "phrase", 1, MaxFilterPhrase)
	if err != nil {
		return Filter{}, err
	}
	if strings.ContainsAny(phrase, "\n\t") {
		return Filter{}, Errorf(BadUserInput, "phrase must be one line")
	}
	if !in.Context.Valid() {
		return Filter{}, Errorf(BadUserInput, "context must name at least one place")
	}
	f := Filter{Phrase: norm.NFC.String(phrase), WholeWord: in.WholeWord, Context: in.Context}
	if in.ExpiresIn != nil {
		s := *in.ExpiresIn
		if s <= 0 {
			return Filter{}, Errorf(BadUserInput, "expiresIn must be in the future (at least 1 second)")
		}
		if s > MaxFilterExpiry {
			return Filter{}, Errorf(BadUserInput, "expiresIn must be at most %d seconds", MaxFilterExpiry)
		}
		at := now.Add(time.Duration(s) * time.Second).Truncate(time.Millisecond)
		f.ExpiresAt = &at
	}
	return f, nil
}

// TooManyFilters is the error of a filter past MaxFilters.
func TooManyFilters() error {
	return Errorf(BadUserInput, "at most %d filters", MaxFilters)
}

// FilterNotFound is the error of a filter the viewer does not have.
func FilterNotFound(id string) error {
	return Errorf(NotFound, "filter %s not found", id)
}

// Matcher holds a viewer's active filters compiled for matching: each
// phrase normalized and case-folded once. Build one per viewer and
// operation (NewMatcher), not per post. A nil Matcher matches nothing.
type Matcher struct {
	phrases []compiledFilter
	in      FilterContext // the union of the filters' contexts
}

type compiledFilter struct {
	folded    string
	wholeWord bool
	context   FilterContext
}

// foldText is how text and phrases are compared: NFC, Unicode case
// folding (tags.go's fold), then NFC again, as folding may leave text
// that is not.
func foldText(s string) string { return norm.NFC.String(fold(s)) }

// NewMatcher compiles the filters active at now; nil when none is.
func NewMatcher(filters []Filter, now time.Time) *Matcher {
	m := &Matcher{}
	for i := range filters {
		f := &filters[i]
		if !f.ActiveAt(now) || f.Phrase == "" {
			continue
		}
		m.phrases = append(m.phrases, compiledFilter{folded: foldText(f.Phrase), wholeWord: f.WholeWord, context: f.Context})
		m.in |= f.Context
	}
	if len(m.phrases) == 0 {
		return nil
	}
	return m
}

// Applies reports whether any filter applies in c: when none does, a
// reader needs no text to decide.
func (m *Matcher) Applies(c FilterContext) bool { return m != nil && m.in&c != 0 }

// Match reports whether a filter that applies in c matches any of texts.
func (m *Matcher) Match(c FilterContext, texts ...string) bool {
	if !m.Applies(c) {
		return false
	}
	for _, t := range texts {
		if t == "" {
			continue
		}
		folded := foldText(t)
		for _, f := range m.phrases {
			if f.context&c != 0 && matches(folded, f.folded, f.wholeWord) {
				return true
			}
		}
	}
	return false
}

// MatchPost reports whether a filter that applies in c hides p: its
// content or spoiler text, and those of orig (its original, for a repost;
// nil when not known or not a repost).
func (m *Matcher) MatchPost(c FilterContext, p, orig *Post) bool {
	if !m.Applies(c) || p == nil {
		return false
	}
	if m.Match(c, p.Content, deref(p.SpoilerText)) {
		return true
	}
	return orig != nil && m.Match(c, orig.Content, deref(orig.SpoilerText))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// matches finds phrase in text (both folded); whole word: bounded on each
// side by the text's end or a character that is no letter, digit or
// combining mark.
func matches(text, phrase string, wholeWord bool) bool {
	for from := 0; from <= len(text); {
		i := strings.Index(text[from:], phrase)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(phrase)
		if !wholeWord || (boundaryBefore(text, i) && boundaryAfter(text, end)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		from = i + max(size, 1)
	}
	return false
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func boundaryBefore(text string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return !wordRune(r)
}

func boundaryAfter(text string, end int) bool {
	if end >= len(text) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text[end:])
	return !wordRune(r)
}

// OperationMatcher returns the matcher ctx's operation built for viewerID
// (known false when none was built yet). Operations without a read state
// (WithReadBudget) keep none.
func OperationMatcher(ctx context.Context, viewerID string) (m *Matcher, known bool) {
	b, ok := readStateOf(ctx)
	if !ok {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	m, known = b.matchers[viewerID]
	return m, known
}

// KeepMatcher records viewerID's matcher for the rest of ctx's operation.
func KeepMatcher(ctx context.Context, viewerID string, m *Matcher) {
	b, ok := readStateOf(ctx)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.matchers == nil {
		b.matchers = make(map[string]*Matcher)
	}
	b.matchers[viewerID] = m
}

// ForgetMatcher drops viewerID's matcher from ctx's operation (their
// filters changed: a later field of the same operation reads them anew).
func ForgetMatcher(ctx context.Context, viewerID string) {
	b, ok := readStateOf(ctx)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.matchers, viewerID)
}
