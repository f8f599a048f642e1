package connector

import (
	"fmt"
	"math"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// The Nexmark model (after Apache Beam's NexmarkGenerator and the Flink nexmark datagen).
//
// Events are numbered 0, 1, 2, ... and come in blocks of 50: event 0 of a block is a person,
// events 1-3 are auctions and events 4-49 are bids (proportions 1:3:46). A table of one kind
// sees only its kind's events; its row r is the r-th event of that kind.
//
// Ids follow from event numbers: the person of block k has id 1000+k and its auctions have
// ids 1000+3k, 1000+3k+1, 1000+3k+2. Unlike Beam's generator, whose bids and sellers may
// reference up to 10 entities that do not exist yet, this generator only references entities
// already generated:
//
//	every bid's auction is an auction with a smaller event number, at most 100 auctions
//	(NumInFlightAuctions) behind the newest one, and every bid's bidder and every auction's
//	seller is a person with a smaller event number, among the newest 1000 (NumActivePeople).
//
// Half of the bids go to "hot" auctions (every 100th auction id) and three quarters of the
// bidders and sellers are "hot" people, as in the standard.
//
// Event time: event e happens at first + e * inter.event.ms, minus a deterministic disorder
// in [0, out.of.order] ms. As the undisturbed times increase, an event is never more than
// out.of.order ms behind any event before it, so the watermark
// ts - INTERVAL 'out.of.order' MILLISECOND makes no row late, in any of the three tables.
const (
	blockSize           = 50
	firstPersonID       = 1000
	firstAuctionID      = 1000
	firstCategoryID     = 10
	numCategories       = 5
	numInFlightAuctions = 100
	numActivePeople     = 1000
	hotRatio            = 100 // hot auctions and people are every 100th id
	numChannels         = 10_000
)

const nexmarkOptions = "'connector', 'nexmark.table', 'events.per.second', 'events.max', 'seed', " +
	"'nexmark.out.of.order.ms' (alias 'nexmark.max.out.of.order'), 'nexmark.first.event.time', 'nexmark.inter.event.ms'"

type field struct {
	name string
	t    types.T
}

// nexmarkKind is one event kind: its place in a block and its schema.
type nexmarkKind struct {
	name   string
	base   int64 // offset of its first event in a block
	prop   int64 // events of this kind per block
	schema []field
	extra  int // mean length of the 'extra' padding (Beam's average sizes minus the fields)
}

var (
	personKind = &nexmarkKind{"person", 0, 1, []field{
		{"id", types.TBigInt}, {"name", types.TVarchar}, {"email_address", types.TVarchar},
		{"credit_card", types.TVarchar}, {"city", types.TVarchar}, {"state", types.TVarchar},
		{"date_time", types.TTimestamp}, {"extra", types.TVarchar}}, 136}
	auctionKind = &nexmarkKind{"auction", 1, 3, []field{
		{"id", types.TBigInt}, {"item_name", types.TVarchar}, {"description", types.TVarchar},
		{"initial_bid", types.TBigInt}, {"reserve", types.TBigInt}, {"date_time", types.TTimestamp},
		{"expires", types.TTimestamp}, {"seller", types.TBigInt}, {"category", types.TBigInt},
		{"extra", types.TVarchar}}, 380}
	bidKind = &nexmarkKind{"bid", 4, 46, []field{
		{"auction", types.TBigInt}, {"bidder", types.TBigInt}, {"price", types.TBigInt},
		{"channel", types.TVarchar}, {"url", types.TVarchar}, {"date_time", types.TTimestamp},
		{"extra", types.TVarchar}}, 68}
)

func (k *nexmarkKind) describe() string {
	parts := make([]string, len(k.schema))
	for i, f := range k.schema {
		parts[i] = f.name + " " + f.t.String()
	}
	return k.name + "(" + strings.Join(parts, ", ") + ")"
}

// width is the expected length of field f's strings, to size buffers.
func (k *nexmarkKind) width(f int) int {
	switch k.schema[f].name {
	case "extra":
		return k.extra * 6 / 5
	case "url", "description":
		return 100
	}
	return 20
}

// eventOf is the event number of row r of this kind.
func (k *nexmarkKind) eventOf(r int64) int64 { return r/k.prop*blockSize + k.base + r%k.prop }

// countBelow is the number of events of this kind numbered below e.
func (k *nexmarkKind) countBelow(e int64) int64 {
	return e/blockSize*k.prop + min(max(e%blockSize-k.base, 0), k.prop)
}

type nexmark struct {
	kind   *nexmarkKind
	slot   []int // schema field -> output column, or -1
	types  []types.T
	width  []int // expected bytes per string value, by column
	seed   uint64
	rows   int64 // -1 = unbounded
	first  int64 // event time of event 0, UTC ms
	gapNum int64 // event-time gap between events = gapNum/gapDen ms
	gapDen int64
	ooo    int64
}

func openNexmark(o *Options, cols []catalog.Column) (generator, int64, error) {
	g := &nexmark{}
	if tbl, ok := o.Take("nexmark.table"); ok {
		switch strings.ToLower(strings.TrimSpace(tbl)) {
		case "bid":
			g.kind = bidKind
		case "auction":
			g.kind = auctionKind
		case "person":
			g.kind = personKind
		default:
			return nil, 0, o.errorf("nexmark.table", "'bid', 'auction' or 'person'")
		}
		if err := g.bind(cols); err != nil {
			return nil, 0, err
		}
	} else if err := g.infer(cols); err != nil {
		return nil, 0, err
	}
	rate, err := o.rate("events.per.second")
	if err != nil {
		return nil, 0, err
	}
	maxEvents, err := o.int("events.max", -1, 0, 1<<62, "a non-negative integer number of events (all kinds)")
	if err != nil {
		return nil, 0, err
	}
	g.rows = -1
	if maxEvents >= 0 {
		g.rows = g.kind.countBelow(maxEvents)
	}
	if g.seed, err = o.seed(); err != nil {
		return nil, 0, err
	}
	const msExpected = "a non-negative integer number of milliseconds"
	const maxMs = 1 << 40
	oooKey, err := o.alias("nexmark.out.of.order.ms", "nexmark.max.out.of.order")
	if err != nil {
		return nil, 0, err
	}
	if g.ooo, err = o.int(oooKey, 1000, 0, maxMs, msExpected); err != nil {
		return nil, 0, err
	}
	if g.first, err = o.timestamp("nexmark.first.event.time", defaultStart); err != nil {
		return nil, 0, err
	}
	g.gapNum, g.gapDen = 1, 1
	if rate > 0 {
		g.gapNum, g.gapDen = 1000, rate
	}
	if gap, err := o.int("nexmark.inter.event.ms", -1, 0, maxMs, msExpected); err != nil {
		return nil, 0, err
	} else if gap >= 0 {
		g.gapNum, g.gapDen = gap, 1
	}
	return g, rate, nil
}

// infer picks the kind for a table without 'nexmark.table': the one kind whose schema takes
// all of its columns (bid's columns name no other kind's; person and auction share id).
func (g *nexmark) infer(cols []catalog.Column) error {
	var fits []*nexmarkKind
	for _, k := range []*nexmarkKind{bidKind, auctionKind, personKind} {
		if (&nexmark{kind: k}).bind(cols) == nil {
			fits = append(fits, k)
		}
	}
	if len(fits) != 1 {
		return fmt.Errorf("nexmark: option 'nexmark.table' is required: expected 'bid', 'auction' or 'person' "+
			"(the columns fit %d of %s, %s and %s)", len(fits), bidKind.describe(), auctionKind.describe(), personKind.describe())
	}
	g.kind = fits[0]
	return g.bind(cols)
}

// bind maps the table's columns to the kind's schema by name. A TIMESTAMP(3) column the
// schema does not name (ts, say) takes the event's time, date_time, in a kind with no other
// timestamp (bid, person; an auction's expires must be named).
func (g *nexmark) bind(cols []catalog.Column) error {
	g.slot = make([]int, len(g.kind.schema))
	for i := range g.slot {
		g.slot[i] = -1
	}
	g.types = make([]types.T, len(cols))
	g.width = nil
	for c, col := range cols {
		f := g.kind.field(col.Name)
		if f < 0 && col.Type == types.TTimestamp && g.kind.timestamps() == 1 {
			f = g.kind.field("date_time")
		}
		if f < 0 {
			return fmt.Errorf("nexmark: table 'nexmark.table' = '%s' has no column %s: expected a subset of %s",
				g.kind.name, col.Name, g.kind.describe())
		}
		if want := g.kind.schema[f].t; col.Type != want {
			return fmt.Errorf("nexmark: column %s is %s: expected %s, as in %s",
				col.Name, col.Type, want, g.kind.describe())
		}
		if prev := g.slot[f]; prev >= 0 {
			return fmt.Errorf("nexmark: columns %s and %s both take %s's %s", cols[prev].Name, col.Name, g.kind.name, g.kind.schema[f].name)
		}
		g.slot[f] = c
		g.types[c] = col.Type
		g.width = append(g.width, g.kind.width(f))
	}
	return nil
}

// timestamps is how many TIMESTAMP(3) fields the kind has.
func (k *nexmarkKind) timestamps() int {
	n := 0
	for _, f := range k.schema {
		if f.t == types.TTimestamp {
			n++
		}
	}
	return n
}

// field is the index of the field of the schema named name (case-insensitive), or -1.
func (k *nexmarkKind) field(name string) int {
	for i, sf := range k.schema {
		if strings.EqualFold(sf.name, name) {
			return i
		}
	}
	return -1
}

func (g *nexmark) total() int64              { return g.rows }
func (g *nexmark) tick(r int64) int64        { return g.kind.eventOf(r) }
func (g *nexmark) rowsThrough(t int64) int64 { return g.kind.countBelow(max(t+1, 0)) }

// Salts separating the random streams of one event.
const (
	saltEvent = iota + 1
	saltDisorder
	saltChannel
)

// eventTime is the (disordered) event time of event e.
func (g *nexmark) eventTime(e int64) int64 {
	t := g.first + e*g.gapNum/g.gapDen
	if g.ooo > 0 {
		r := newRng(g.seed, uint64(e), saltDisorder)
		t -= r.intn(g.ooo + 1)
	}
	return t
}

func (g *nexmark) fill(from int64, n int, _ int64) *exec.Batch {
	o := newOuts(g.types, n, g.width)
	for i := 0; i < n; i++ {
		e := g.kind.eventOf(from + int64(i))
		r := newRng(g.seed, uint64(e), saltEvent)
		switch g.kind {
		case personKind:
			g.person(o, e, &r)
		case auctionKind:
			g.auction(o, e, &r)
		default:
			g.bid(o, e, &r)
		}
	}
	return finish(o, n)
}

// put stores v in field f's column if the table has it.
func (g *nexmark) put(o []out, f int, v int64) {
	if c := g.slot[f]; c >= 0 {
		o[c].ints = append(o[c].ints, v)
	}
}

// str returns field f's column, or nil if the table lacks it.
func (g *nexmark) str(o []out, f int) *strCol {
	if c := g.slot[f]; c >= 0 {
		return &o[c].str
	}
	return nil
}

// Every field consumes the same draws whether or not the table has its column, so a row's
// values do not depend on which columns are declared. Free text takes one draw as the seed
// of its own stream, so an absent column costs nothing to skip.

// text writes free text of a length in [lo, hi] from the stream seeded by seed.
func text(s *strCol, seed uint64, lo, hi int64) {
	if s == nil {
		return
	}
	r := rng{s: seed}
	s.text(&r, int(r.between(lo, hi)))
	s.end()
}

// extra writes Beam-style padding of mean length avg (±20%).
func extra(s *strCol, seed uint64, avg int) {
	d := int64(avg) / 5
	text(s, seed, int64(avg)-d, int64(avg)+d)
}

// price is Beam's price distribution: 10^(6u) dollars, in cents.
func price(r *rng) int64 { return int64(math.Round(math.Exp(r.float()*6*math.Ln10) * 100)) }

// lastPerson is the base-0 id of the newest person at or before event e.
func lastPerson(e int64) int64 { return e / blockSize }

// pickPerson picks a person (base 0): three quarters hot, otherwise one of the newest
// numActivePeople. hot is the id offset of a hot person within its hundred.
func pickPerson(r *rng, last, hot int64) int64 {
	if r.intn(4) > 0 {
		if id := last / hotRatio * hotRatio; id+hot <= last {
			return id + hot
		}
		return last / hotRatio * hotRatio
	}
	active := min(last+1, numActivePeople)
	return last + 1 - active + r.intn(active)
}

var (
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	hotChannel = []string{"Google", "Facebook", "Baidu", "Apple"}
	hotURL     = []string{
		"https://www.nexmark.com/google/item.htm?query=1",
		"https://www.nexmark.com/facebook/item.htm?query=1",
		"https://www.nexmark.com/baidu/item.htm?query=1",
		"https://www.nexmark.com/apple/item.htm?query=1",
	}
)

const (
	pID = iota
	pName
	pEmail
	pCard
	pCity
	pState
	pDateTime
	pExtra
)

func (g *nexmark) person(o []out, e int64, r *rng) {
	g.put(o, pID, firstPersonID+lastPerson(e))
	first, last := firstNames[r.intn(int64(len(firstNames)))], lastNames[r.intn(int64(len(lastNames)))]
	if s := g.str(o, pName); s != nil {
		s.add(first + " " + last)
	}
	emailSeed := r.next()
	if s := g.str(o, pEmail); s != nil {
		er := rng{s: emailSeed}
		s.chars(&er, 7, lowerLetters)
		s.data = append(s.data, '@')
		s.chars(&er, 5, lowerLetters)
		s.add(".com")
	}
	cardSeed := r.next()
	if s := g.str(o, pCard); s != nil {
		cr := rng{s: cardSeed}
		for k := 0; k < 4; k++ {
			if k > 0 {
				s.data = append(s.data, ' ')
			}
			s.digits(cr.intn(10000), 4)
		}
		s.end()
	}
	city, state := cities[r.intn(int64(len(cities)))], states[r.intn(int64(len(states)))]
	if s := g.str(o, pCity); s != nil {
		s.add(city)
	}
	if s := g.str(o, pState); s != nil {
		s.add(state)
	}
	g.put(o, pDateTime, g.eventTime(e))
	extra(g.str(o, pExtra), r.next(), g.kind.extra)
}

const (
	aID = iota
	aItem
	aDesc
	aInitial
	aReserve
	aDateTime
	aExpires
	aSeller
	aCategory
	aExtra
)

func (g *nexmark) auction(o []out, e int64, r *rng) {
	g.put(o, aID, firstAuctionID+e/blockSize*auctionKind.prop+e%blockSize-auctionKind.base)
	text(g.str(o, aItem), r.next(), 3, 20)
	text(g.str(o, aDesc), r.next(), 3, 100)
	initial := price(r)
	g.put(o, aInitial, initial)
	g.put(o, aReserve, initial+price(r))
	ts := g.eventTime(e)
	g.put(o, aDateTime, ts)
	// An auction runs for up to twice the event time NumInFlightAuctions auctions take.
	horizon := numInFlightAuctions * blockSize / auctionKind.prop * g.gapNum / g.gapDen
	g.put(o, aExpires, ts+1+r.intn(max(2*horizon, 1)))
	g.put(o, aSeller, firstPersonID+pickPerson(r, lastPerson(e), 0))
	g.put(o, aCategory, firstCategoryID+r.intn(numCategories))
	extra(g.str(o, aExtra), r.next(), g.kind.extra)
}

const (
	bAuction = iota
	bBidder
	bPrice
	bChannel
	bURL
	bDateTime
	bExtra
)

func (g *nexmark) bid(o []out, e int64, r *rng) {
	// The newest auction (base 0) at a bid: the block's three auctions precede its bids.
	last := e/blockSize*auctionKind.prop + auctionKind.prop - 1
	auction := last / hotRatio * hotRatio
	if r.intn(2) == 0 {
		lo := max(last-numInFlightAuctions, 0)
		auction = lo + r.intn(last-lo+1)
	}
	g.put(o, bAuction, firstAuctionID+auction)
	g.put(o, bBidder, firstPersonID+pickPerson(r, lastPerson(e), 1))
	g.put(o, bPrice, price(r))
	ch, url := g.str(o, bChannel), g.str(o, bURL)
	if r.intn(2) > 0 {
		i := r.intn(int64(len(hotChannel)))
		if ch != nil {
			ch.add(hotChannel[i])
		}
		if url != nil {
			url.add(hotURL[i])
		}
	} else {
		c := r.intn(numChannels)
		if ch != nil {
			ch.data = append(ch.data, "channel-"...)
			ch.int(c)
			ch.end()
		}
		if url != nil {
			// A channel's URL is a function of the channel alone.
			ur := newRng(g.seed, uint64(c), saltChannel)
			url.data = append(url.data, "https://www.nexmark.com/"...)
			for k := 0; k < 3; k++ {
				url.chars(&ur, 5, lowerLetters)
				url.data = append(url.data, '/')
			}
			url.data = append(url.data, "item.htm?query=1&channel_id="...)
			url.int(c)
			url.end()
		}
	}
	g.put(o, bDateTime, g.eventTime(e))
	extra(g.str(o, bExtra), r.next(), g.kind.extra)
}
