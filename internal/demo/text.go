package demo

import (
	"math/rand/v2"
	"strings"

	"github.com/socialgw/gateway/internal/seed"
)

// The demo's people are named first_last, from these lists; Users must not
// exceed len(firstNames)*len(lastNames).
var (
	firstNames = strings.Fields(`ana ben chloe david emma felix grace hugo iris jonas kira liam
		maya noah olga pablo quinn rosa sam tara umar vera wen xavi yara zoe amir bea carlos dana
		elif finn gita hana ivan jade kofi lena marco nadia`)
	lastNames = strings.Fields(`berg costa diaz evans fischer garcia hall ito jensen kowalski
		lopez moreau nguyen okafor petrov`)
)

// name is the user name of plan index i: distinct for i below
// len(firstNames)*len(lastNames), and spread so that neighbours do not
// share a first name.
func name(i int) string {
	f := firstNames[i%len(firstNames)]
	l := lastNames[(i/len(firstNames)+i)%len(lastNames)]
	return f + "_" + l
}

// Posts are a template with its blanks filled from the lists below.
var (
	postTemplates = []string{
		"Just finished {book}. {verdict}",
		"Morning run along the {place}: {km} km and the sun came out halfway. {mood}",
		"Anyone else think {opinion}? Asking for a friend.",
		"Tried {food} at the new place near the {place} today. {verdict}",
		"Day {km} of learning {skill}. {mood}",
		"Reminder: {advice}",
		"Finally shipped {project} after {km} weeks. {mood}",
		"The {place} at sunset never gets old. {mood}",
		"Hot take: {opinion}.",
		"Reading {book} on the train and missed my stop. {verdict}",
		"Made {food} from scratch tonight. {verdict}",
		"Looking for recommendations: {skill} podcasts or books?",
		"{advice} That's it, that's the post.",
		"Weekend plan: {place}, {food}, no laptop. {mood}",
	}
	repostTemplates = []string{
		"This!", "So true.", "Worth a read.", "Couldn't agree more.", "Ha, exactly.",
		"Sharing for the folks who missed it.", "Bookmarking this one.", "Important.",
	}
	commentTemplates = []string{
		"Love this!", "So true 😄", "Where is that?", "Congrats, well deserved!", "Same here.",
		"Tell me more about {food}?", "I need to try that.", "Great tip, thanks.",
		"Haha, been there.", "Which {skill} course did you take?", "Saving this for later.",
		"Beautiful.", "Not sure I agree, but fair point.", "Count me in next time!",
	}
	fills = map[string][]string{
		"book":    {"a sci-fi novel about generation ships", "the new biography everyone talks about", "a history of maps", "a tiny book of poems", "a thriller set in Lisbon"},
		"verdict": {"Highly recommend.", "Ten out of ten.", "Not my thing, but glad I tried.", "Would do it again.", "Mixed feelings, honestly."},
		"place":   {"river", "old harbour", "park", "hills", "market", "beach", "canal"},
		"km":      {"3", "5", "7", "10", "12", "21"},
		"mood":    {"Good day.", "Feeling great!", "Tired but happy.", "Grateful.", "More of this, please."},
		"opinion": {"tabs are better than spaces", "pineapple belongs on pizza", "meetings should be 25 minutes", "cold brew is overrated", "winter is the best season"},
		"food":    {"ramen", "sourdough", "tacos", "dumplings", "shakshuka", "pho", "falafel", "risotto"},
		"skill":   {"Japanese", "the cello", "watercolour", "Go", "bouldering", "chess", "pottery"},
		"advice":  {"drink some water.", "back up your photos.", "call your parents.", "go outside for ten minutes.", "stretch before you run."},
		"project": {"the new website", "our mobile app", "the garden shed", "a home-made keyboard", "the community newsletter"},
	}
)

// text is seed.Config.Text for the demo: short posts and comments that
// read like a social network's.
func text(rng *rand.Rand, kind seed.TextKind) string {
	var t string
	switch kind {
	case seed.RepostText:
		t = repostTemplates[rng.IntN(len(repostTemplates))]
	case seed.CommentText:
		t = commentTemplates[rng.IntN(len(commentTemplates))]
	default:
		t = postTemplates[rng.IntN(len(postTemplates))]
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			b.WriteString(t)
			return b.String()
		}
		end := open + strings.IndexByte(t[open:], '}')
		words := fills[t[open+1:end]]
		b.WriteString(t[:open])
		b.WriteString(words[rng.IntN(len(words))])
		t = t[end+1:]
	}
}
