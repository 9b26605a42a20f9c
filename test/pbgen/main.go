// pbgen writes what ksched's protobuf reader needs from k8s.io/api v0.34.1
// (read from the Go types' protobuf and json struct tags, which
// go-to-protobuf generated generated.proto from):
//
//	pbgen schema > src/codec/pb_schema.c   the message table
//	pbgen data N SEED > file                N random objects of every kind
//	                                        ksched watches, each as JSON and
//	                                        as protobuf (test_pb_decode)
package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	schedv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

type root struct {
	apiVersion string
	obj        runtime.Object
}

// Every kind ksched reads with protobuf (the reflectors' kinds and their
// lists, the answers it reads) and the ones it writes (Binding).
var roots = []root{
	{"v1", &corev1.Pod{}}, {"v1", &corev1.PodList{}},
	{"v1", &corev1.Node{}}, {"v1", &corev1.NodeList{}},
	{"v1", &corev1.Namespace{}}, {"v1", &corev1.NamespaceList{}},
	{"v1", &corev1.PersistentVolume{}}, {"v1", &corev1.PersistentVolumeList{}},
	{"v1", &corev1.PersistentVolumeClaim{}}, {"v1", &corev1.PersistentVolumeClaimList{}},
	{"v1", &corev1.Service{}}, {"v1", &corev1.ServiceList{}},
	{"v1", &corev1.ReplicationController{}}, {"v1", &corev1.ReplicationControllerList{}},
	{"v1", &corev1.Binding{}},
	{"storage.k8s.io/v1", &storagev1.StorageClass{}}, {"storage.k8s.io/v1", &storagev1.StorageClassList{}},
	{"storage.k8s.io/v1", &storagev1.CSINode{}}, {"storage.k8s.io/v1", &storagev1.CSINodeList{}},
	{"storage.k8s.io/v1", &storagev1.CSIDriver{}}, {"storage.k8s.io/v1", &storagev1.CSIDriverList{}},
	{"storage.k8s.io/v1", &storagev1.CSIStorageCapacity{}}, {"storage.k8s.io/v1", &storagev1.CSIStorageCapacityList{}},
	{"storage.k8s.io/v1", &storagev1.VolumeAttachment{}}, {"storage.k8s.io/v1", &storagev1.VolumeAttachmentList{}},
	{"policy/v1", &policyv1.PodDisruptionBudget{}}, {"policy/v1", &policyv1.PodDisruptionBudgetList{}},
	{"apps/v1", &appsv1.ReplicaSet{}}, {"apps/v1", &appsv1.ReplicaSetList{}},
	{"apps/v1", &appsv1.StatefulSet{}}, {"apps/v1", &appsv1.StatefulSetList{}},
	{"resource.k8s.io/v1", &resourcev1.ResourceClaim{}}, {"resource.k8s.io/v1", &resourcev1.ResourceClaimList{}},
	{"resource.k8s.io/v1", &resourcev1.ResourceSlice{}}, {"resource.k8s.io/v1", &resourcev1.ResourceSliceList{}},
	{"resource.k8s.io/v1", &resourcev1.DeviceClass{}}, {"resource.k8s.io/v1", &resourcev1.DeviceClassList{}},
	{"resource.k8s.io/v1alpha3", &resourcev1alpha3.DeviceTaintRule{}},
	{"resource.k8s.io/v1alpha3", &resourcev1alpha3.DeviceTaintRuleList{}},
	{"scheduling.k8s.io/v1", &schedv1.PriorityClass{}}, {"scheduling.k8s.io/v1", &schedv1.PriorityClassList{}},
	{"coordination.k8s.io/v1", &coordv1.Lease{}},
	{"events.k8s.io/v1", &eventsv1.Event{}},
	{"v1", &metav1.Status{}},
}

var (
	tQuantity  = reflect.TypeOf(resource.Quantity{})
	tTime      = reflect.TypeOf(metav1.Time{})
	tMicroTime = reflect.TypeOf(metav1.MicroTime{})
	tDuration  = reflect.TypeOf(metav1.Duration{})
	tIntOrStr  = reflect.TypeOf(intstr.IntOrString{})
	tRawExt    = reflect.TypeOf(runtime.RawExtension{})
	tFieldsV1  = reflect.TypeOf(metav1.FieldsV1{})
)

type field struct {
	num                                  int
	name                                 string
	kind                                 string // PBK_*
	msg                                  int    // PBK_MSG: message index
	ptr, omitempty, repeated, isMap, inl bool
	packedOK                             bool
}

type message struct {
	name   string
	t      reflect.Type
	fields []field
}

var (
	msgs  []*message
	index = map[reflect.Type]int{}
)

func leafKind(t reflect.Type) (string, bool) {
	switch t {
	case tQuantity:
		return "PBK_QUANTITY", true
	case tTime:
		return "PBK_TIME", true
	case tMicroTime:
		return "PBK_MICROTIME", true
	case tDuration:
		return "PBK_DURATION", true
	case tIntOrStr:
		return "PBK_INTORSTR", true
	case tRawExt:
		return "PBK_RAWJSON", true
	case tFieldsV1:
		return "PBK_SKIP", true
	}
	switch t.Kind() {
	case reflect.String:
		return "PBK_STRING", true
	case reflect.Bool:
		return "PBK_BOOL", true
	case reflect.Int32:
		return "PBK_INT32", true
	case reflect.Int64, reflect.Int:
		return "PBK_INT64", true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "PBK_BYTES", true
		}
	}
	return "", false
}

func msgOf(t reflect.Type) int {
	if i, ok := index[t]; ok {
		return i
	}
	m := &message{name: t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:] + "." + t.Name(), t: t}
	i := len(msgs)
	msgs = append(msgs, m)
	index[t] = i
	for j := 0; j < t.NumField(); j++ {
		sf := t.Field(j)
		pt := sf.Tag.Get("protobuf")
		if pt == "" {
			continue
		}
		parts := strings.Split(pt, ",")
		num, err := strconv.Atoi(parts[1])
		if err != nil {
			panic(err)
		}
		f := field{num: num}
		for _, p := range parts {
			if strings.HasPrefix(p, "name=") {
				f.name = p[5:]
			}
		}
		js := sf.Tag.Get("json")
		jparts := strings.Split(js, ",")
		if jparts[0] == "-" {
			continue
		}
		if jparts[0] != "" {
			f.name = jparts[0]
		}
		for _, o := range jparts[1:] {
			if o == "omitempty" {
				f.omitempty = true
			}
			if o == "inline" {
				f.inl = true
			}
		}
		ft := sf.Type
		if ft.Kind() == reflect.Ptr {
			f.ptr = true
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Map {
			f.isMap = true
			if ft.Key().Kind() != reflect.String {
				panic("map key " + ft.String())
			}
			ft = ft.Elem()
		} else if ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 {
			f.repeated = true
			ft = ft.Elem()
			if ft.Kind() == reflect.Ptr {
				ft = ft.Elem()
			}
		}
		if t == reflect.TypeOf(metav1.ObjectMeta{}) && f.name == "managedFields" {
			// nothing in ksched reads them; skipping saves most of a pod's decoding
			f.kind = "PBK_SKIP"
		} else if k, ok := leafKind(ft); ok {
			f.kind = k
		} else if ft.Kind() == reflect.Struct {
			f.kind = "PBK_MSG"
			f.msg = -1
		} else if ft.Kind() == reflect.Slice && f.isMap {
			// map[string][]string (e.g. extra in user info): a list of strings in a message
			f.kind = "PBK_STRLIST"
		} else {
			panic(fmt.Sprintf("%s.%s: %s", t, sf.Name, ft))
		}
		if f.kind == "PBK_MSG" {
			f.msg = msgOf(ft)
		}
		m.fields = append(m.fields, f)
	}
	sort.Slice(m.fields, func(a, b int) bool { return m.fields[a].num < m.fields[b].num })
	return i
}

func flags(f field) string {
	var fl []string
	if f.ptr {
		fl = append(fl, "PBF_PTR")
	}
	if f.omitempty {
		fl = append(fl, "PBF_OMITEMPTY")
	}
	if f.repeated {
		fl = append(fl, "PBF_REPEATED")
	}
	if f.isMap {
		fl = append(fl, "PBF_MAP")
	}
	if f.inl {
		fl = append(fl, "PBF_INLINE")
	}
	if len(fl) == 0 {
		return "0"
	}
	return strings.Join(fl, " | ")
}

func genSchema() {
	type rootIdx struct {
		av, kind string
		msg      int
	}
	var rs []rootIdx
	for _, r := range roots {
		t := reflect.TypeOf(r.obj).Elem()
		rs = append(rs, rootIdx{r.apiVersion, t.Name(), msgOf(t)})
	}
	w := os.Stdout
	fmt.Fprintln(w, "/* Generated by test/pbgen (go run . schema) from the protobuf and json tags of")
	fmt.Fprintln(w, " * k8s.io/api and k8s.io/apimachinery v0.34.1. Do not edit. */")
	fmt.Fprintln(w, "#include \"codec/pb_schema.h\"")
	fmt.Fprintln(w)
	for i, m := range msgs {
		if len(m.fields) == 0 {
			continue
		}
		fmt.Fprintf(w, "static const ks_pb_field f%d[] = { /* %s */\n", i, m.name)
		for _, f := range m.fields {
			fmt.Fprintf(w, "    {%d, \"%s\", %s, %s, %d},\n", f.num, f.name, f.kind, flags(f), f.msg)
		}
		fmt.Fprintln(w, "};")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "const ks_pb_message ks_pb_messages[] = {")
	for i, m := range msgs {
		if len(m.fields) == 0 {
			fmt.Fprintf(w, "    {\"%s\", NULL, 0},\n", m.name)
		} else {
			fmt.Fprintf(w, "    {\"%s\", f%d, %d},\n", m.name, i, len(m.fields))
		}
	}
	fmt.Fprintln(w, "};")
	fmt.Fprintf(w, "const unsigned ks_pb_nmessages = %d;\n\n", len(msgs))
	fmt.Fprintln(w, "const ks_pb_root ks_pb_roots[] = {")
	for _, r := range rs {
		fmt.Fprintf(w, "    {\"%s\", \"%s\", %d},\n", r.av, r.kind, r.msg)
	}
	fmt.Fprintln(w, "};")
	fmt.Fprintf(w, "const unsigned ks_pb_nroots = %d;\n", len(rs))
}

// ---- data ------------------------------------------------------------------

func quantity(c randfill.Continue) resource.Quantity {
	forms := []string{"100m", "1", "2Gi", "1500M", "0", "12345", "1.5", "3e3", "64Ki", "250m", "7E", "1k"}
	q := resource.MustParse(forms[c.Intn(len(forms))])
	return q
}

func fillFuncs() []interface{} {
	return []interface{}{
		func(q *resource.Quantity, c randfill.Continue) { *q = quantity(c) },
		func(t *metav1.Time, c randfill.Continue) {
			if c.Intn(5) == 0 {
				*t = metav1.Time{}
				return
			}
			*t = metav1.Unix(c.Int63n(4e9), 0)
		},
		func(t *metav1.MicroTime, c randfill.Continue) {
			if c.Intn(5) == 0 {
				*t = metav1.MicroTime{}
				return
			}
			*t = metav1.NewMicroTime(time.Unix(c.Int63n(4e9), c.Int63n(1e9)).Truncate(time.Microsecond))
		},
		func(d *metav1.Duration, c randfill.Continue) {
			d.Duration = time.Duration(c.Int63n(1e13)) - 1e12
		},
		func(x *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*x = intstr.FromInt32(c.Int31() - 1<<30)
			} else {
				*x = intstr.FromString(c.String(8))
			}
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				*r = runtime.RawExtension{}
				return
			}
			r.Raw = []byte(fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Params","n":%d,"s":%q,"l":[true,null,1.5]}`,
				c.Intn(1000), c.String(6)))
		},
		func(f *metav1.FieldsV1, c randfill.Continue) { f.Raw = []byte(`{"f:metadata":{}}`) },
		func(s *string, c randfill.Continue) {
			// printable text, now and then empty, quotes and non-ASCII
			alpha := []string{"a", "b", "Z", "0", "-", ".", "/", "\"", "\\", "é", "界", " ", "\n", "<", "&"}
			n := c.Intn(8)
			var b strings.Builder
			for i := 0; i < n; i++ {
				b.WriteString(alpha[c.Intn(len(alpha))])
			}
			*s = b.String()
		},
	}
}

func genData(n int, seed int64) {
	f := randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(fillFuncs()...)
	ps := protobuf.NewSerializer(nil, nil)
	_ = ps
	out := os.Stdout
	r := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		rt := roots[r.Intn(len(roots))]
		obj := reflect.New(reflect.TypeOf(rt.obj).Elem()).Interface().(runtime.Object)
		f.Fill(obj)
		gvk := schema.FromAPIVersionAndKind(rt.apiVersion, reflect.TypeOf(rt.obj).Elem().Name())
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		// objects inside objects (list items, volumeClaimTemplates) carry
		// no apiVersion and kind: protobuf has no place for them
		clearTypeMeta(reflect.ValueOf(obj).Elem(), true)
		js, err := json.Marshal(obj)
		if err != nil {
			fmt.Fprintln(os.Stderr, "json:", err)
			os.Exit(1)
		}
		pb, err := encodeProto(obj, gvk)
		if err != nil {
			fmt.Fprintln(os.Stderr, "protobuf:", err)
			os.Exit(1)
		}
		var hdr [4]byte
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(js)))
		out.Write(hdr[:])
		out.Write(js)
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(pb)))
		out.Write(hdr[:])
		out.Write(pb)
	}
}

var tTypeMeta = reflect.TypeOf(metav1.TypeMeta{})

func clearTypeMeta(v reflect.Value, top bool) {
	switch v.Kind() {
	case reflect.Ptr:
		if !v.IsNil() {
			clearTypeMeta(v.Elem(), false)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			clearTypeMeta(v.Index(i), false)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			clearTypeMeta(e, false)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if f.Type() == tTypeMeta {
				if !top {
					f.Set(reflect.Zero(tTypeMeta))
				}
				continue
			}
			if v.Type().Field(i).IsExported() {
				clearTypeMeta(f, false)
			}
		}
	}
}

// The API server's wire form: "k8s\0" then runtime.Unknown{typeMeta, raw}.
func encodeProto(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	m, ok := obj.(interface{ Marshal() ([]byte, error) })
	if !ok {
		return nil, fmt.Errorf("%T has no Marshal", obj)
	}
	raw, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, Raw: raw}
	b, err := unk.Marshal()
	if err != nil {
		return nil, err
	}
	return append([]byte{0x6b, 0x38, 0x73, 0x00}, b...), nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pbgen schema | data N SEED")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "schema":
		genSchema()
	case "data":
		n, _ := strconv.Atoi(os.Args[2])
		seed, _ := strconv.ParseInt(os.Args[3], 10, 64)
		genData(n, seed)
	default:
		os.Exit(2)
	}
}
