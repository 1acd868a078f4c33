package seed

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/socialgw/gateway/internal/social"
)

// The shape of the data set. Users are ranked twice by independent random
// permutations: by popularity (how many followers they get) and by
// activity (how many posts they write); a third permutation, sociability,
// weights who follows whom, so following counts have a tail too.
const (
	// A user of popularity rank r (1-based) gets about topFollowers/r^popAlpha
	// followers, topFollowers being half the users: at 10 000 users that is
	// 5 000 for the most followed, 5 for the least, about 18 on average.
	popAlpha = 0.75
	// The author of each post is drawn with weight 1/r^actAlpha of their
	// activity rank: at 10 000 users and 100 000 posts the most active
	// writes about 3 700 posts, the median user about 4.
	actAlpha = 0.8
	// Followers are drawn with weight 1/r^socAlpha of their sociability.
	socAlpha = 0.5

	repostShare = 0.05 // of posts are reposts of an earlier public post
	onlyToShare = 0.01 // of posts are ONLY_TO 1–5 of the author's followers
	notToShare  = 0.01 // of posts are NOT_TO 1–5 users

	// Likes and comments per post follow discrete power laws:
	// P(n >= k) = (k+1)^-a, with a long tail up to the caps. Repeated
	// likers are dropped, so at 10 000 users a post has about 1 like and
	// 0.6 comments on average.
	likesAlpha    = 1.5
	commentsAlpha = 2.0
	maxLikes      = 500
	maxComments   = 100
	// A liker or commenter is one of the author's followers with this
	// probability (when the author has followers), else anyone.
	fromFollowers = 0.8

	// Posts are created in batches; a repost only reposts a post of an
	// earlier batch, which is then sure to exist.
	postBatch = 1024
)

// Plan is a data set decided before anything is written: users are plan
// indexes 0..Users-1, posts 0..len(Posts)-1. The same Config gives the same
// plan.
type Plan struct {
	Users    int
	Active   []bool     // users whose home timeline is read before posting
	Follows  [][2]int32 // (follower, followee), in the order they are made
	Posts    []PlannedPost
	Likes    [][2]int32 // (post, user)
	Comments []PlannedComment

	followers [][]int32 // of each user
}

// PlannedPost is one post of a Plan.
type PlannedPost struct {
	Author   int32
	Content  string
	RepostOf int32 // a post of an earlier batch, or -1
	Vis      social.Visibility
	Audience []int32 // onlyTo or notTo
}

// PlannedComment is one comment of a Plan.
type PlannedComment struct {
	Post, Author int32
	Content      string
}

// Followers returns the plan indexes of u's followers.
func (p *Plan) Followers(u int) []int32 { return p.followers[u] }

// NewPlan decides the data set of c.
func NewPlan(c Config) *Plan {
	c = c.withDefaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	n := c.Users
	p := &Plan{Users: n, Active: make([]bool, n), followers: make([][]int32, n)}
	for u := range p.Active {
		p.Active[u] = rng.Float64() < c.ActiveShare
	}
	// The steps draw from rng in this order: the plan of a Config is
	// fixed by it.
	p.planFollows(rng)
	p.planPosts(rng, c)
	for i := range p.Posts {
		p.planEngagement(rng, c, i)
	}
	return p
}

// planFollows draws each user's followers by sociability without
// repeats.
func (p *Plan) planFollows(rng *rand.Rand) {
	n := p.Users
	pop, soc := rng.Perm(n), rng.Perm(n)
	follow := newSampler(soc, socAlpha)
	mark := make([]int32, n) // mark[v] == u+1: v already follows u
	top := float64(n) / 2
	for u := range n {
		want := int(top / math.Pow(float64(pop[u]+1), popAlpha))
		want = min(want, n-1)
		for len(p.followers[u]) < want {
			v := follow.draw(rng)
			if v == u || mark[v] == int32(u+1) {
				continue
			}
			mark[v] = int32(u + 1)
			p.followers[u] = append(p.followers[u], int32(v))
			p.Follows = append(p.Follows, [2]int32{int32(v), int32(u)})
		}
	}
	rng.Shuffle(len(p.Follows), func(i, j int) { p.Follows[i], p.Follows[j] = p.Follows[j], p.Follows[i] })
}

// planPosts draws the posts: authors by activity, some reposts of public
// originals of earlier batches, a few ONLY_TO and NOT_TO audiences.
func (p *Plan) planPosts(rng *rand.Rand, c Config) {
	author := newSampler(rng.Perm(p.Users), actAlpha)
	p.Posts = make([]PlannedPost, c.Posts)
	var public []int32 // public originals of the batches before this one
	for i := range p.Posts {
		if i%postBatch == 0 {
			for j := max(0, i-postBatch); j < i; j++ {
				if q := p.Posts[j]; q.Vis == social.Public && q.RepostOf < 0 {
					public = append(public, int32(j))
				}
			}
		}
		a := int32(author.draw(rng))
		post := PlannedPost{Author: a, RepostOf: -1, Vis: social.Public, Content: c.Text(rng, PostText)}
		switch r := rng.Float64(); {
		case r < repostShare:
			if len(public) > 0 { // else a public post
				post.RepostOf = public[rng.IntN(len(public))]
				post.Content = c.Text(rng, RepostText)
			}
		case r < repostShare+onlyToShare:
			post.Vis = social.OnlyTo
			post.Audience = p.pick(rng, p.followers[a], 1+rng.IntN(5), a)
		case r < repostShare+onlyToShare+notToShare:
			post.Vis = social.NotTo
			post.Audience = p.pick(rng, nil, 1+rng.IntN(5), a)
		}
		p.Posts[i] = post
	}
}

// planEngagement draws the likes and comments of post i, by people who
// may see it.
func (p *Plan) planEngagement(rng *rand.Rand, c Config, i int) {
	n := p.Users
	post := p.Posts[i]
	pool, excluded := p.followers[post.Author], map[int32]bool{post.Author: true}
	switch post.Vis {
	case social.OnlyTo:
		pool = post.Audience
	case social.NotTo:
		for _, u := range post.Audience {
			excluded[u] = true
		}
	}
	engager := func() (int32, bool) {
		for range 8 {
			var u int32
			if post.Vis == social.OnlyTo || (len(pool) > 0 && rng.Float64() < fromFollowers) {
				if len(pool) == 0 {
					return 0, false
				}
				u = pool[rng.IntN(len(pool))]
			} else {
				u = int32(rng.IntN(n))
			}
			if !excluded[u] {
				return u, true
			}
		}
		return 0, false
	}
	likes := powerLaw(rng, likesAlpha, min(maxLikes, n-1))
	liked := map[int32]bool{}
	for range likes {
		if u, ok := engager(); ok && !liked[u] {
			liked[u] = true
			p.Likes = append(p.Likes, [2]int32{int32(i), u})
		}
	}
	for range powerLaw(rng, commentsAlpha, maxComments) {
		if u, ok := engager(); ok {
			p.Comments = append(p.Comments, PlannedComment{Post: int32(i), Author: u, Content: c.Text(rng, CommentText)})
		}
	}
}

// pick returns up to k distinct users other than not: from pool when it is
// not empty, else from everyone.
func (p *Plan) pick(rng *rand.Rand, pool []int32, k int, not int32) []int32 {
	var out []int32
	for try := 0; len(out) < k && try < 4*k; try++ {
		u := int32(rng.IntN(p.Users))
		if len(pool) > 0 {
			u = pool[rng.IntN(len(pool))]
		}
		if u != not && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	if len(out) == 0 && len(pool) > 0 && pool[0] != not {
		out = append(out, pool[0])
	}
	if len(out) == 0 { // an ONLY_TO list may not be empty
		out = append(out, (not+1)%int32(p.Users))
	}
	return out
}

// powerLaw draws n >= 0 with P(n >= k) = (k+1)^-a, capped at max.
func powerLaw(rng *rand.Rand, a float64, max int) int {
	u := 1 - rng.Float64() // (0, 1]
	n := int(math.Pow(u, -1/a)) - 1
	return min(n, max)
}

// sampler draws users with weight 1/rank^alpha, rank[u] being u's 0-based
// rank.
type sampler struct {
	cum   []float64 // cumulative weight, by user
	total float64
}

func newSampler(rank []int, alpha float64) *sampler {
	s := &sampler{cum: make([]float64, len(rank))}
	for u, r := range rank {
		s.total += 1 / math.Pow(float64(r+1), alpha)
		s.cum[u] = s.total
	}
	return s
}

func (s *sampler) draw(rng *rand.Rand) int {
	x := rng.Float64() * s.total
	i, _ := slices.BinarySearch(s.cum, x)
	return min(i, len(s.cum)-1)
}

// words are what posts and comments are made of.
var words = strings.Fields(`the a of to and in is it you that he was for on are with as I his they be at one have
this from or had by hot word but what some we can out other were all there when up use your how said an each she
which do their time if will way about many then them write would like so these her long make thing see him two has
look more day could go come did number sound no most people my over know water than call first who may down side
been now find any new work part take get place made live where after back little only round man year came show
every good me give our under name very through just form sentence great think say help low line differ turn cause
much mean before move right boy old too same tell does set three want air well also play small end put home read
hand port large spell add even land here must big high such follow act why ask men change went light kind off
need house picture try us again animal point mother world near build self earth father head stand own page should
country found answer school grow study still learn plant cover food sun four between state keep eye never last let
thought city tree cross farm hard start might story saw far sea draw left late run don't while press close night
real life few north open seem together next white children begin got walk example ease paper group always music
those both mark often letter until mile river car feet care second book carry took science eat room friend began
idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl usual young
ready above ever red list though feel talk bird soon body dog family direct pose leave song measure door product
black short numeral class wind question happen complete ship area half rock order fire south problem piece told
knew pass since top whole king space heard best hour better true during hundred five remember step early hold west
ground interest reach fast verb sing listen six table travel less morning ten simple several vowel toward war lay
against pattern slow center love person money serve appear road map rain rule govern pull cold notice voice unit
power town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest correct able
pound done beauty drive stood contain front teach week final gave green oh quick develop ocean warm free minute
strong special mind behind clear tail produce fact street inch multiply nothing course stay wheel full force blue
object decide surface deep moon island foot system busy test record boat common gold possible plane stead dry
wonder laugh thousand ago ran check game shape equate miss brought heat snow tire bring yes distant fill east paint
language among café naïve über jalapeño`)

// wordSalad is the default Config.Text: random words.
func wordSalad(rng *rand.Rand, kind TextKind) string {
	switch kind {
	case RepostText:
		return text(rng, 5, 60)
	case CommentText:
		return text(rng, 5, 120)
	}
	return text(rng, 20, 200)
}

// text returns random words of min to max characters in all.
func text(rng *rand.Rand, minLen, maxLen int) string {
	want := minLen + rng.IntN(maxLen-minLen+1)
	var b strings.Builder
	for b.Len() < want {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}
