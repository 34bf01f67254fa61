package identity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

func fp(kind graph.FingerprintKind, v string) graph.Fingerprint {
	f, err := graph.NormalizeFingerprint(kind, v)
	if err != nil {
		panic(err)
	}
	return f
}

// Devices of the studio, each a function of its port.
func synthAt(port string) []graph.Fingerprint {
	return []graph.Fingerprint{
		fp(graph.FPUSBID, "0582:01a9"), fp(graph.FPUSBPath, port),
		fp(graph.FPALSACardID, "JDXi"), fp(graph.FPMIDIClient, "JD-Xi"),
		fp(graph.FPPipeWireDevice, "alsa_card.usb-Roland_JD-Xi-00"),
	}
}

func twinAt(port string) []graph.Fingerprint {
	return []graph.Fingerprint{
		fp(graph.FPUSBID, "0944:0117"), fp(graph.FPUSBPath, port),
		fp(graph.FPALSACardID, "nanoKONTROL2"), fp(graph.FPMIDIClient, "nanoKONTROL2"),
	}
}

func ifaceAt(port, serial string) []graph.Fingerprint {
	return []graph.Fingerprint{
		fp(graph.FPUSBSerial, "1235:8211:"+serial), fp(graph.FPUSBID, "1235:8211"), fp(graph.FPUSBPath, port),
		fp(graph.FPALSACardID, "USB"), fp(graph.FPPipeWireDevice, "alsa_card.usb-Focusrite_Scarlett_2i2_USB"),
	}
}

func keyboardAt(port string) []graph.Fingerprint {
	return []graph.Fingerprint{fp(graph.FPUSBID, "046d:c31c"), fp(graph.FPUSBPath, port)}
}

// world is a tiny in-memory hint index for the pure scorer: identities and their hints.
type world map[string][]graph.Fingerprint

func (w world) evidence(subject []graph.Fingerprint) *Evidence {
	ev := &Evidence{Holders: map[graph.Fingerprint][]string{}, Identities: map[string]*graph.Identity{}}
	for id, hints := range w {
		ev.Identities[id] = &graph.Identity{ID: id, Name: strings.TrimPrefix(id, "identity:"), Hints: hints}
		for _, f := range subject {
			if graph.ContainsFingerprint(hints, f) {
				ev.Holders[f] = append(ev.Holders[f], id)
			}
		}
	}
	return ev
}

func scene(devs ...[]graph.Fingerprint) *Scene {
	snap := &graph.Snapshot{}
	for i, d := range devs {
		snap.Devices = append(snap.Devices, &graph.ObservedDevice{Key: string(rune('a' + i)), Fingerprints: d})
	}
	return NewScene(snap)
}

func explanation(m *graph.Match) string {
	var sb strings.Builder
	sb.WriteString(m.Summary)
	for _, r := range m.Explanation {
		sb.WriteString("\n" + string(r.Class) + " " + string(r.Kind) + "=" + r.Value + ": " + r.Note)
	}
	return sb.String()
}

func TestScore(t *testing.T) {
	t.Parallel()
	const (
		jdxi  = "identity:jdxi"
		twinA = "identity:nano-a"
		twinB = "identity:nano-b"
		iface = "identity:scarlett"
		other = "identity:other"
		kbd   = "identity:keyboard"
	)
	for _, tc := range []struct {
		name      string
		world     world
		present   [][]graph.Fingerprint // the snapshot
		subject   []graph.Fingerprint
		inScene   bool
		wantID    string
		wantConf  graph.Confidence
		wantAmbig bool
		minScore  float64
		maxScore  float64
		explain   []string // substrings the explanation must carry
	}{
		{
			name:    "UnitAloneIsHigh",
			world:   world{iface: {fp(graph.FPUSBSerial, "1235:8211:Y7A")}},
			present: [][]graph.Fingerprint{ifaceAt("3-1", "Y7A")}, subject: ifaceAt("3-1", "Y7A"), inScene: true,
			wantID: iface, wantConf: graph.High, minScore: 1, maxScore: 1,
			explain: []string{"unit fingerprint: one unit in the world"},
		},
		{
			name:    "UnitMovedPortStillHigh",
			world:   world{iface: ifaceAt("3-1", "Y7A")},
			present: [][]graph.Fingerprint{ifaceAt("1-2", "Y7A")}, subject: ifaceAt("1-2", "Y7A"), inScene: true,
			wantID: iface, wantConf: graph.High, minScore: 1, maxScore: 1,
		},
		{
			name:    "UnitHeldByTwoIdentitiesIsAmbiguous",
			world:   world{iface: {fp(graph.FPUSBSerial, "1235:8211:Y7A")}, other: {fp(graph.FPUSBSerial, "1235:8211:Y7A")}},
			present: [][]graph.Fingerprint{ifaceAt("3-1", "Y7A")}, subject: ifaceAt("3-1", "Y7A"), inScene: true,
			wantConf: graph.Low, wantAmbig: true, maxScore: 0.75,
			explain: []string{"too: ambiguous"},
		},
		{
			name:    "UnitShownByTwoDevicesCountsLikeModel",
			world:   world{iface: {fp(graph.FPUSBSerial, "1235:8211:0001")}},
			present: [][]graph.Fingerprint{ifaceAt("3-1", "0001"), ifaceAt("3-2", "0001")}, subject: ifaceAt("3-1", "0001"), inScene: true,
			wantID: iface, wantConf: graph.Low, maxScore: 0.3,
			explain: []string{"cloned serial"},
		},
		{
			name:    "DifferentSerialSameModelIsADifferentUnit",
			world:   world{iface: ifaceAt("3-1", "Y7A")},
			present: [][]graph.Fingerprint{ifaceAt("3-1", "Z9Z")}, subject: ifaceAt("3-1", "Z9Z"), inScene: true,
			wantID: iface, wantConf: graph.Low, maxScore: capDiffUnit,
			explain: []string{"a different unit"},
		},
		{
			name:    "SerialLessSynthOnItsPortIsHigh",
			world:   world{jdxi: synthAt("3-3.2")},
			present: [][]graph.Fingerprint{synthAt("3-3.2"), ifaceAt("3-1", "Y7A")}, subject: synthAt("3-3.2"), inScene: true,
			wantID: jdxi, wantConf: graph.High, minScore: 1, maxScore: 1,
			explain: []string{"model and names agree", "held only by identity:jdxi"},
		},
		{
			name:    "SerialLessSynthMovedIsStillHigh",
			world:   world{jdxi: synthAt("3-3.2")},
			present: [][]graph.Fingerprint{synthAt("1-4"), ifaceAt("3-1", "Y7A")}, subject: synthAt("1-4"), inScene: true,
			wantID: jdxi, wantConf: graph.High, minScore: 0.95, maxScore: 0.95,
			explain: []string{"moved ports", "was known on port 3-3.2", "this device is on 1-4"},
		},
		{
			name:    "ModelWithoutNamesOnAnotherPortIsNotHigh",
			world:   world{kbd: keyboardAt("1-1")},
			present: [][]graph.Fingerprint{keyboardAt("1-3")}, subject: keyboardAt("1-3"), inScene: true,
			wantID: kbd, wantConf: graph.Low, maxScore: 0.3,
		},
		{
			name:    "ModelAndPortWithoutNamesIsHigh",
			world:   world{kbd: keyboardAt("1-1")},
			present: [][]graph.Fingerprint{keyboardAt("1-1")}, subject: keyboardAt("1-1"), inScene: true,
			wantID: kbd, wantConf: graph.High, minScore: 0.8, maxScore: 0.8,
			explain: []string{"the port is the only evidence"},
		},
		{
			name:    "NamesAloneAreNotHigh",
			world:   world{jdxi: synthAt("3-3.2")[2:]},
			present: [][]graph.Fingerprint{synthAt("3-3.2")[2:]}, subject: synthAt("3-3.2")[2:], inScene: true,
			wantID: jdxi, wantConf: graph.Low, maxScore: 0.3,
		},
		{
			name:    "ModelAndNamesClaimedByTwoIdentitiesIsAmbiguous",
			world:   world{jdxi: synthAt("3-3.2"), other: synthAt("3-3.3")},
			present: [][]graph.Fingerprint{synthAt("1-4")}, subject: synthAt("1-4"), inScene: true,
			wantConf: graph.Medium, wantAmbig: true, minScore: 0.4, maxScore: 0.75,
			explain: []string{"ambiguous", "holds it too"},
		},
		{
			name:    "NewDeviceOnAKnownPortIsLow",
			world:   world{jdxi: synthAt("3-3.2")},
			present: [][]graph.Fingerprint{keyboardAt("3-3.2")}, subject: keyboardAt("3-3.2"), inScene: true,
			wantID: jdxi, wantConf: graph.Low, maxScore: 0.15,
		},
		{
			name:    "UnknownDevice",
			world:   world{jdxi: synthAt("3-3.2")},
			present: [][]graph.Fingerprint{ifaceAt("3-1", "Y7A")}, subject: ifaceAt("3-1", "Y7A"), inScene: true,
			wantConf: graph.Low, maxScore: 0,
			explain: []string{"no identity holds"},
		},
		{
			name:    "TwinsUnboundNeitherMatches",
			world:   world{jdxi: synthAt("3-3.2")},
			present: [][]graph.Fingerprint{twinAt("3-4.1"), twinAt("3-4.2")}, subject: twinAt("3-4.1"), inScene: true,
			wantConf: graph.Low, maxScore: 0,
		},
		{
			name:    "FirstTwinBoundIsHighByItsPort",
			world:   world{twinA: twinAt("3-4.1")},
			present: [][]graph.Fingerprint{twinAt("3-4.1"), twinAt("3-4.2")}, subject: twinAt("3-4.1"), inScene: true,
			wantID: twinA, wantConf: graph.High, minScore: 0.8, maxScore: 0.8,
			explain: []string{"port is the only evidence", "identical units swapped between ports can be told apart by nothing else"},
		},
		{
			name:    "OtherTwinIsNotTheFirstTwinsIdentity",
			world:   world{twinA: twinAt("3-4.1")},
			present: [][]graph.Fingerprint{twinAt("3-4.1"), twinAt("3-4.2")}, subject: twinAt("3-4.2"), inScene: true,
			wantID: twinA, wantConf: graph.Medium, minScore: 0.4, maxScore: 0.75,
			explain: []string{"twins", "where another present device is now"},
		},
		{
			name:    "BoundTwinsEachHighByPortA",
			world:   world{twinA: twinAt("3-4.1"), twinB: twinAt("3-4.2")},
			present: [][]graph.Fingerprint{twinAt("3-4.1"), twinAt("3-4.2")}, subject: twinAt("3-4.1"), inScene: true,
			wantID: twinA, wantConf: graph.High, minScore: 0.8, maxScore: 0.8,
			explain: []string{"port is the only evidence telling it from identity:nano-b", "nothing else"},
		},
		{
			name:    "BoundTwinsEachHighByPortB",
			world:   world{twinA: twinAt("3-4.1"), twinB: twinAt("3-4.2")},
			present: [][]graph.Fingerprint{twinAt("3-4.1"), twinAt("3-4.2")}, subject: twinAt("3-4.2"), inScene: true,
			wantID: twinB, wantConf: graph.High, minScore: 0.8, maxScore: 0.8,
			explain: []string{"port is the only evidence telling it from identity:nano-a"},
		},
		{
			name:    "TwinReplugggedIntoThirdPortIsNotHigh",
			world:   world{twinA: twinAt("3-4.1"), twinB: twinAt("3-4.2")},
			present: [][]graph.Fingerprint{twinAt("3-4.1"), twinAt("3-4.3")}, subject: twinAt("3-4.3"), inScene: true,
			wantConf: graph.Medium, wantAmbig: true, minScore: 0.4, maxScore: 0.75,
			explain: []string{"identity:nano-a and identity:nano-b"},
		},
		{
			name:    "TwinLeftOnItsPortStaysHigh",
			world:   world{twinA: twinAt("3-4.1"), twinB: twinAt("3-4.2")},
			present: [][]graph.Fingerprint{twinAt("3-4.1"), twinAt("3-4.3")}, subject: twinAt("3-4.1"), inScene: true,
			wantID: twinA, wantConf: graph.High, minScore: 0.8, maxScore: 0.8,
		},
		{
			name:    "LoneTwinOnANewPortIsAmbiguous",
			world:   world{twinA: twinAt("3-4.1"), twinB: twinAt("3-4.2")},
			present: [][]graph.Fingerprint{twinAt("3-4.3")}, subject: twinAt("3-4.3"), inScene: true,
			wantConf: graph.Medium, wantAmbig: true, maxScore: 0.75,
		},
		{
			name:    "UnitBeatsModelAndNames",
			world:   world{iface: {fp(graph.FPUSBSerial, "1235:8211:Y7A")}, other: ifaceAt("3-1", "Y7A")[1:]},
			present: [][]graph.Fingerprint{ifaceAt("3-1", "Y7A")}, subject: ifaceAt("3-1", "Y7A"), inScene: true,
			wantID: iface, wantConf: graph.High, minScore: 1, maxScore: 1,
		},
		{
			name:    "TypedFingerprintsOutsideTheSceneCountThemselves",
			world:   world{twinA: twinAt("3-4.1")},
			present: [][]graph.Fingerprint{twinAt("3-4.2")}, subject: twinAt("3-4.9")[:1:1], inScene: false,
			wantID: twinA, wantConf: graph.Low, maxScore: 0.3,
			explain: []string{"2 present devices show it"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scene(tc.present...)
			m := Score(Subject{Fingerprints: tc.subject, InScene: tc.inScene}, sc, tc.world.evidence(tc.subject))
			why := explanation(m)
			if tc.wantID != "" && m.IdentityID != tc.wantID {
				t.Errorf("identity=%q, want %q\n%s", m.IdentityID, tc.wantID, why)
			}
			if got, want := m.Confidence, tc.wantConf; got != want {
				t.Errorf("confidence=%q, want %q (score %v)\n%s", got, want, m.Score, why)
			}
			if got, want := m.Ambiguous, tc.wantAmbig; got != want {
				t.Errorf("ambiguous=%v, want %v\n%s", got, want, why)
			}
			if m.Score < tc.minScore || m.Score > tc.maxScore || m.Score < 0 || m.Score > 1 {
				t.Errorf("score=%v, want in [%v, %v]\n%s", m.Score, tc.minScore, tc.maxScore, why)
			}
			if m.Ambiguous && m.Confidence == graph.High {
				t.Errorf("ambiguous match is high\n%s", why)
			}
			for _, s := range tc.explain {
				if !strings.Contains(why, s) {
					t.Errorf("explanation lacks %q:\n%s", s, why)
				}
			}
			if m.Confidence == graph.High {
				counted := 0
				for _, r := range m.Explanation {
					if r.Weight > 0 {
						counted++
					}
				}
				if counted == 0 {
					t.Errorf("high match explains no hint that counted:\n%s", why)
				}
			}
		})
	}
}

func TestNewScene_SkipsInfra(t *testing.T) {
	t.Parallel()
	snap := &graph.Snapshot{Devices: []*graph.ObservedDevice{
		{Key: "hub1", Infra: true, Fingerprints: []graph.Fingerprint{fp(graph.FPUSBID, "1d6b:0002")}},
		{Key: "hub2", Infra: true, Fingerprints: []graph.Fingerprint{fp(graph.FPUSBID, "1d6b:0002")}},
		{Key: "synth", Fingerprints: append(synthAt("3-1"), synthAt("3-1")...)},
	}}
	sc := NewScene(snap)
	if got := sc.Shown(fp(graph.FPUSBID, "1d6b:0002"), false); got != 1 {
		t.Errorf("hub model shown=%d, want 1 (infra is not counted, only the subject)", got)
	}
	if got := sc.Shown(fp(graph.FPUSBID, "0582:01a9"), true); got != 1 {
		t.Errorf("synth model shown=%d, want 1 (duplicates within a device count once)", got)
	}
	if !sc.InScene("synth") || sc.InScene("hub1") {
		t.Errorf("InScene: synth=%v hub1=%v, want true false", sc.InScene("synth"), sc.InScene("hub1"))
	}
}

func TestScore_GenericModelHeldByMany(t *testing.T) {
	t.Parallel()
	w := world{}
	for i := 0; i < 20; i++ {
		w[fmt.Sprintf("identity:board-%02d", i)] = keyboardAt(fmt.Sprintf("1-%d", i))
	}
	subject := keyboardAt("2-1")
	m := Score(Subject{Fingerprints: subject, InScene: true}, scene(subject), w.evidence(subject))
	if m.Confidence == graph.High || !m.Ambiguous {
		t.Errorf("a model twenty identities hold: confidence=%s ambiguous=%v", m.Confidence, m.Ambiguous)
	}
	if got, want := len(m.Candidates), maxCandidates; got != want {
		t.Errorf("candidates=%d, want %d", got, want)
	}
	if got := Candidates(Subject{Fingerprints: subject}, nil, w.evidence(subject)); len(got) != maxLoaded {
		t.Errorf("loaded candidates=%d, want %d", len(got), maxLoaded)
	}
}
