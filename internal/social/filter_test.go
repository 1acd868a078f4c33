package social_test

import (
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

func TestMatcher(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Hour)
	tests := []struct {
		name   string
		filter social.Filter
		in     social.FilterContext
		text   string
		want   bool
	}{
		{"substring", social.Filter{Phrase: "cat"}, social.FilterHome, "concatenate", true},
		{"whole word inside a word", social.Filter{Phrase: "cat", WholeWord: true}, social.FilterHome, "concatenate", false},
		{"whole word alone", social.Filter{Phrase: "cat", WholeWord: true}, social.FilterHome, "a cat.", true},
		{"whole word at the start and end", social.Filter{Phrase: "cat", WholeWord: true}, social.FilterHome, "cat", true},
		{"whole word found on a later match", social.Filter{Phrase: "cat", WholeWord: true}, social.FilterHome, "cats and a cat", true},
		{"digit is a word character", social.Filter{Phrase: "go", WholeWord: true}, social.FilterHome, "go1 go2", false},
		{"underscore bounds a word", social.Filter{Phrase: "go", WholeWord: true}, social.FilterHome, "x_go_y", true},
		{"case", social.Filter{Phrase: "Spoiler"}, social.FilterHome, "SPOILER alert", true},
		{"case folding ß", social.Filter{Phrase: "strasse", WholeWord: true}, social.FilterHome, "Die STRAßE", true},
		{"case folding final sigma", social.Filter{Phrase: "ΟΔΟΣ", WholeWord: true}, social.FilterHome, "η οδος", true},
		{"NFC: composed phrase, decomposed text", social.Filter{Phrase: "café", WholeWord: true}, social.FilterHome, "cafe\u0301 au lait", true},
		{"NFC: decomposed phrase, composed text", social.Filter{Phrase: "cafe\u0301"}, social.FilterHome, "CAFÉ", true},
		{"accented letter is a word character", social.Filter{Phrase: "caf", WholeWord: true}, social.FilterHome, "café", false},
		{"combining mark is part of the word", social.Filter{Phrase: "cafe", WholeWord: true}, social.FilterHome, "cafe\u0301", false},
		{"non-Latin word", social.Filter{Phrase: "кот", WholeWord: true}, social.FilterHome, "Мой КОТ спит", true},
		{"non-Latin inside a word", social.Filter{Phrase: "кот", WholeWord: true}, social.FilterHome, "котёнок", false},
		{"phrase of words", social.Filter{Phrase: "game of thrones", WholeWord: true}, social.FilterHome, "Game of Thrones finale!", true},
		{"phrase words split otherwise", social.Filter{Phrase: "game of thrones", WholeWord: true}, social.FilterHome, "game, of thrones", false},
		{"punctuation bounds", social.Filter{Phrase: "#spoilers", WholeWord: true}, social.FilterHome, "no #spoilers!", true},
		{"emoji", social.Filter{Phrase: "🍕"}, social.FilterHome, "pizza🍕time", true},
		{"other context", social.Filter{Phrase: "cat"}, social.FilterPublic, "cat", false},
		{"one of several contexts", social.Filter{Phrase: "cat", Context: social.FilterHome | social.FilterPublic}, social.FilterPublic, "cat", true},
		{"expired", social.Filter{Phrase: "cat", ExpiresAt: &past}, social.FilterHome, "cat", false},
		{"not yet expired", social.Filter{Phrase: "cat", ExpiresAt: &future}, social.FilterHome, "cat", true},
		{"empty text", social.Filter{Phrase: "cat"}, social.FilterHome, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.filter
			if f.Context == 0 {
				f.Context = social.FilterHome
			}
			m := social.NewMatcher([]social.Filter{f}, now)
			if got := m.Match(tt.in, tt.text); got != tt.want {
				t.Fatalf("Match(%q in %q) = %v, want %v", f.Phrase, tt.text, got, tt.want)
			}
		})
	}
}

func TestMatcherPost(t *testing.T) {
	now := time.Now()
	m := social.NewMatcher([]social.Filter{{Phrase: "secret", Context: social.FilterHome}}, now)
	spoiler := "a Secret ending"
	tests := []struct {
		name       string
		post, orig *social.Post
		want       bool
	}{
		{"content", &social.Post{Content: "the secret"}, nil, true},
		{"spoiler text", &social.Post{Content: "hm", SpoilerText: &spoiler}, nil, true},
		{"repost: the original's text", &social.Post{RepostOfID: "1"}, &social.Post{Content: "SECRET"}, true},
		{"neither", &social.Post{Content: "open"}, &social.Post{Content: "plain"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.MatchPost(social.FilterHome, tt.post, tt.orig); got != tt.want {
				t.Fatalf("MatchPost = %v, want %v", got, tt.want)
			}
		})
	}
	if social.NewMatcher(nil, now) != nil || social.NewMatcher([]social.Filter{{Phrase: "x", Context: social.FilterHome, ExpiresAt: &now}}, now) != nil {
		t.Fatal("a matcher of no active filter is not nil")
	}
	var none *social.Matcher
	if none.Match(social.FilterHome, "x") || none.Applies(social.FilterHome) {
		t.Fatal("a nil matcher matches")
	}
}

func TestCheckFilter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	secs := func(n int) *int { return &n }
	tests := []struct {
		name    string
		in      social.FilterInput
		phrase  string
		expires time.Duration // 0: never
		invalid bool
	}{
		{"plain", social.FilterInput{Phrase: "  cats ", Context: social.FilterHome}, "cats", 0, false},
		{"normalized to NFC", social.FilterInput{Phrase: "cafe\u0301", Context: social.FilterHome}, "café", 0, false},
		{"expires", social.FilterInput{Phrase: "x", Context: social.FilterComments, ExpiresIn: secs(60)}, "x", time.Minute, false},
		{"at the length limit", social.FilterInput{Phrase: strings.Repeat("é", social.MaxFilterPhrase), Context: social.FilterHome}, strings.Repeat("é", social.MaxFilterPhrase), 0, false},
		{"empty", social.FilterInput{Phrase: " ", Context: social.FilterHome}, "", 0, true},
		{"invisible only", social.FilterInput{Phrase: "\u200b", Context: social.FilterHome}, "", 0, true},
		{"overlong", social.FilterInput{Phrase: strings.Repeat("x", social.MaxFilterPhrase+1), Context: social.FilterHome}, "", 0, true},
		{"two lines", social.FilterInput{Phrase: "a\nb", Context: social.FilterHome}, "", 0, true},
		{"control character", social.FilterInput{Phrase: "a\x1fb", Context: social.FilterHome}, "", 0, true},
		{"no context", social.FilterInput{Phrase: "x"}, "", 0, true},
		{"unknown context", social.FilterInput{Phrase: "x", Context: 1 << 7}, "", 0, true},
		{"expiry now", social.FilterInput{Phrase: "x", Context: social.FilterHome, ExpiresIn: secs(0)}, "", 0, true},
		{"expiry in the past", social.FilterInput{Phrase: "x", Context: social.FilterHome, ExpiresIn: secs(-5)}, "", 0, true},
		{"expiry too far", social.FilterInput{Phrase: "x", Context: social.FilterHome, ExpiresIn: secs(social.MaxFilterExpiry + 1)}, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := social.CheckFilter(tt.in, now)
			if tt.invalid {
				if !social.IsCode(err, social.BadUserInput) {
					t.Fatalf("err = %v, want BAD_USER_INPUT", err)
				}
				return
			}
			if err != nil || f.Phrase != tt.phrase || f.Context != tt.in.Context {
				t.Fatalf("got %+v, %v; want phrase %q", f, err, tt.phrase)
			}
			if (f.ExpiresAt == nil) != (tt.expires == 0) || (f.ExpiresAt != nil && !f.ExpiresAt.Equal(now.Add(tt.expires))) {
				t.Fatalf("expires at %v, want in %v", f.ExpiresAt, tt.expires)
			}
		})
	}
}
