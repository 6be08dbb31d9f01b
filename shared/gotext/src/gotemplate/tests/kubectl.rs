//! Expected texts recorded from kubectl 1.32 (Go 1.23), one case per template: each
//! template was run as
//! `kubectl create -f obj.yaml --dry-run=client --validate=false -o go-template=T`
//! (plus `--allow-missing-template-keys=false` for the `_STRICT` tables) on the
//! ConfigMap of [`super::object`], and the text below is what kubectl printed: the
//! output for a success; for an execution error, the output written before it and
//! the message of kubectl's `error executing template "T": MESSAGE`; for a parse
//! error the message of `error parsing template T, MESSAGE`. The same templates
//! gave byte-identical stdout, stderr and exit codes through `kubectl-create_file`
//! and (for those that do not read `.spec`/`.data`) `kubectl-run_pod` when this
//! table was recorded.

/// Template, output.
pub(super) type Case = (&'static str, &'static str);
/// Template, output before the error, error message.
pub(super) type ErrCase = (&'static str, &'static str, &'static str);

pub(super) const OUTPUTS: &[Case] = &[
    ("{{.metadata.name}}{{\"\\n\"}}", "web\n"),
    (
        "{{.metadata}}",
        "map[annotations:map[note:a <b> & \"c\"] labels:map[app:web tier:fe] name:web namespace:team]",
    ),
    (
        "{{.}}",
        "map[apiVersion:v1 data:map[bad:aGVsbG8$ bin:/w== empty: mode:yes token:aGVsbG8gd29ybGQ=] kind:ConfigMap metadata:map[annotations:map[note:a <b> & \"c\"] labels:map[app:web tier:fe] name:web namespace:team] spec:map[big:1000000 containers:[map[image:nginx name:web ports:[map[containerPort:80]]] map[image:busybox name:log]] emptylist:[] emptymap:map[] flag:true flagoff:false huge:1.2345678901234567e+19 items:[a b c] mixed:[1 x true <nil> map[k:v] [1 2]] multi:line1\nline2 neg:-2 nothing:<nil> nums:[1 2.5 -3] ratio:0.5 replicas:3 small:1e-05 unicode:héllo wörld ✓]]",
    ),
    (
        "{{.spec.containers}}",
        "[map[image:nginx name:web ports:[map[containerPort:80]]] map[image:busybox name:log]]",
    ),
    (
        "{{.status}} {{.nope}} {{.nope.x}}",
        "<no value> <no value> <no value>",
    ),
    ("{{.metadata.creationTimestamp}}", "<no value>"),
    (
        "{{.metadata.labels.run}}|{{index .metadata.labels \"run\"}}|{{index .metadata \"labels\" \"run\"}}",
        "<no value>|<no value>|<no value>",
    ),
    (
        "{{range .spec.containers}}{{.image}} {{end}}",
        "nginx busybox ",
    ),
    (
        "{{range $i, $c := .spec.containers}}{{$i}}={{$c.name}};{{end}}",
        "0=web;1=log;",
    ),
    (
        "{{range $k, $v := .metadata.labels}}{{$k}}:{{$v}},{{end}}",
        "app:web,tier:fe,",
    ),
    ("{{range .metadata.labels}}{{.}},{{end}}", "web,fe,"),
    (
        "{{range $e := .spec.containers}}{{$e.image}}{{end}}",
        "nginxbusybox",
    ),
    ("{{range .nope}}x{{else}}empty{{end}}", "empty"),
    ("{{range .status}}x{{else}}empty{{end}}", "empty"),
    ("{{if .status}}yes{{else}}no{{end}}", "no"),
    ("{{if .metadata}}yes{{else}}no{{end}}", "yes"),
    (
        "{{if eq .kind \"Pod\"}}pod{{else if eq .kind \"ConfigMap\"}}cm{{else}}other{{end}}",
        "cm",
    ),
    (
        "{{with .metadata.labels}}{{.}}{{end}}",
        "map[app:web tier:fe]",
    ),
    ("{{with .nope}}x{{else}}none{{end}}", "none"),
    (
        "{{with .nope}}a{{else with .kind}}b{{.}}{{end}}",
        "bConfigMap",
    ),
    (
        "{{printf \"%s/%s\" .metadata.namespace .metadata.name}}",
        "team/web",
    ),
    (
        "{{len .spec.containers}} {{len .metadata.labels}} {{len .kind}}",
        "2 2 9",
    ),
    (
        "{{not .status}} {{not .metadata}} {{and .kind .apiVersion}} {{or .nope .kind}} {{and .nope .kind}}",
        "true false v1 ConfigMap <no value>",
    ),
    ("{{/* comment */}}a {{- \" b \" -}} c", "a b c"),
    ("a  {{- /* c */ -}}  b", "ab"),
    (
        "{{$x := .kind}}{{$x}} {{$x = \"changed\"}}{{$x}}",
        "ConfigMap changed",
    ),
    (
        "{{$}}",
        "map[apiVersion:v1 data:map[bad:aGVsbG8$ bin:/w== empty: mode:yes token:aGVsbG8gd29ybGQ=] kind:ConfigMap metadata:map[annotations:map[note:a <b> & \"c\"] labels:map[app:web tier:fe] name:web namespace:team] spec:map[big:1000000 containers:[map[image:nginx name:web ports:[map[containerPort:80]]] map[image:busybox name:log]] emptylist:[] emptymap:map[] flag:true flagoff:false huge:1.2345678901234567e+19 items:[a b c] mixed:[1 x true <nil> map[k:v] [1 2]] multi:line1\nline2 neg:-2 nothing:<nil> nums:[1 2.5 -3] ratio:0.5 replicas:3 small:1e-05 unicode:héllo wörld ✓]]",
    ),
    ("{{$.kind}}", "ConfigMap"),
    ("{{(index .spec.containers 0).name}}", "web"),
    (
        "{{(index .spec.containers 0).image | printf \"%q\"}}",
        "\"nginx\"",
    ),
    ("{{.kind | printf \"%s-%s\" \"a\"}}", "a-ConfigMap"),
    ("{{print 1 2 \"a\" \"b\" 3 .kind}}", "1 2ab3ConfigMap"),
    ("{{println 1 \"a\" .nope}}", "1 a <nil>\n"),
    (
        "{{html \"<a href='x'>&</a>\"}} {{js \"a'b\\\"c<d>\"}} {{urlquery \"a b&c=d/é\"}}",
        "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt; a\\'b\\\"c\\u003Cd\\u003E a+b%26c%3Dd%2F%C3%A9",
    ),
    ("{{html .nope .nope}}", "&lt;no value&gt;&lt;no value&gt;"),
    (
        "{{index .spec.containers 1}}",
        "map[image:busybox name:log]",
    ),
    ("{{index .kind 0}} {{index .kind 1}}", "67 111"),
    ("{{index .kind 3}}", "102"),
    (
        "{{slice .kind 1 2}} {{slice .kind 1}} {{slice .spec.containers 0 1}}",
        "o onfigMap [map[image:nginx name:web ports:[map[containerPort:80]]]]",
    ),
    (
        "{{eq .kind \"Pod\" \"ConfigMap\"}} {{ne .kind \"Pod\"}} {{lt \"a\" \"b\"}} {{le 1 2}} {{gt 2.5 1.5}} {{ge \"b\" \"a\"}}",
        "true true true true true true",
    ),
    ("{{eq .nope .nope}} {{eq .kind .nope}}", "true false"),
    (
        "{{exists . \"metadata\" \"name\"}} {{exists . \"nope\"}} {{exists .nope}} {{exists . \"metadata\" \"creationTimestamp\"}} {{exists .spec.containers 0}} {{exists .spec.containers 9}}",
        "true false true false true false",
    ),
    ("{{base64decode \"aGVsbG8gd29ybGQ=\"}}", "hello world"),
    (
        "{{printf \"%d\" 3}} {{printf \"%5d|%-5d|%05d\" 42 42 42}} {{printf \"%x %X %o %b %c %q %U\" 255 255 8 5 65 65 65}}",
        "3    42|42   |00042 ff FF 10 101 A 'A' U+0041",
    ),
    (
        "{{printf \"%f %.2f %e %g %G %8.3f\" 3.14159 3.14159 1234.5678 0.000012345 1e21 2.5}}",
        "3.141590 3.14 1.234568e+03 1.2345e-05 1E+21    2.500",
    ),
    (
        "{{printf \"%v %+v %#v\" .metadata.labels .metadata.labels .metadata.labels}}",
        "map[app:web tier:fe] map[app:web tier:fe] map[string]interface {}{\"app\":\"web\", \"tier\":\"fe\"}",
    ),
    (
        "{{printf \"%s %q %x\" .kind .kind .kind}}",
        "ConfigMap \"ConfigMap\" 436f6e6669674d6170",
    ),
    ("{{printf \"%t %v\" true false}}", "true false"),
    ("{{printf \"%d\"}}", "%!d(MISSING)"),
    ("{{printf \"%d %d\" 1}}", "1 %!d(MISSING)"),
    ("{{printf \"%d\" 1 2}}", "1%!(EXTRA int=2)"),
    ("{{printf \"%!\"}}", "%!!(MISSING)"),
    (
        "{{printf \"%T %T %T %T %T %T\" 1 1.5 \"s\" true .metadata .spec.containers}}",
        "int float64 string bool map[string]interface {} []interface {}",
    ),
    ("{{printf \"%T\" .nope}}", "<nil>"),
    (
        "{{printf \"%s\" .metadata.labels}} {{printf \"%d\" .metadata.labels}}",
        "map[app:web tier:fe] map[%!d(string=app):%!d(string=web) %!d(string=tier):%!d(string=fe)]",
    ),
    (
        "{{printf \"%v\" .spec.containers}} {{printf \"%#v\" .spec.containers}}",
        "[map[image:nginx name:web ports:[map[containerPort:80]]] map[image:busybox name:log]] []interface {}{map[string]interface {}{\"image\":\"nginx\", \"name\":\"web\", \"ports\":[]interface {}{map[string]interface {}{\"containerPort\":80}}}, map[string]interface {}{\"image\":\"busybox\", \"name\":\"log\"}}",
    ),
    (
        "{{printf \"%6.2f|%-8.3e|%+d|% d\" 3.14159 1234.5 5 5}}",
        "  3.14|1.234e+03|+5| 5",
    ),
    ("{{printf \"%[2]s %[1]s\" \"a\" \"b\"}}", "b a"),
    (
        "{{printf \"%*d|%-*d|%.*f\" 5 1 5 1 2 3.14159}}",
        "    1|1    |3.14",
    ),
    (
        "{{printf \"%#x %#o %#b %#q\" 255 8 5 \"a`b\"}}",
        "0xff 010 0b101 \"a`b\"",
    ),
    (
        "{{printf \"%08.3f|%+08.3f|%-08.3f\" 3.14159 3.14159 3.14159}}",
        "0003.142|+003.142|3.142   ",
    ),
    (
        "{{printf \"%10s|%-10s|%.2s|%010s\" \"abc\" \"abc\" \"abc\" \"abc\"}}",
        "       abc|abc       |ab|0000000abc",
    ),
    ("{{printf \"%v %v %v\" 1e6 1e21 1e-5}}", "1e+06 1e+21 1e-05"),
    (
        "{{printf \"%e %E %.0e %#.0e %#g %#v\" 0.0 1.0 5.0 5.0 1.0 1.0}}",
        "0.000000e+00 1.000000E+00 5e+00 5.e+00 1.00000 1",
    ),
    (
        "{{printf \"%x %X %b\" 1.5 -0.1 1.0}}",
        "0x1.8p+00 -0X1.999999999999AP-04 4503599627370496p-52",
    ),
    (
        "{{printf \"%5t|%-6v|%q\" true false 'x'}}",
        " true|false |'x'",
    ),
    ("{{printf \"%c|%c\" 0x1F600 -1}}", "😀|�"),
    (
        "{{1}} {{1.5}} {{0x10}} {{'a'}} {{1e3}} {{-2}} {{0b101}} {{0o17}} {{1_000}} {{1+2i}} {{2i}}",
        "1 1.5 16 97 1000 -2 5 15 1000 (1+2i) (0+2i)",
    ),
    ("{{true}} {{\"str\"}} {{`raw`}}", "true str raw"),
    ("{{\"\\x41\\u00e9\\n\\t\\\\\"}}", "Aé\n\t\\"),
    ("{{1 | printf \"%d\"}}", "1"),
    ("{{\"a\" | len}}", "1"),
    ("{{.metadata.creationTimestamp.x}}", "<no value>"),
    (
        "{{define \"x\"}}[{{.}}]{{end}}{{template \"x\" .kind}}{{template \"x\"}}",
        "[ConfigMap][<no value>]",
    ),
    (
        "{{define \"x\"}}{{.metadata.name}}{{end}}{{template \"x\" .}}",
        "web",
    ),
    ("{{block \"b\" .kind}}<{{.}}>{{end}}", "<ConfigMap>"),
    (
        "{{define \"r\"}}{{if .}}{{index . 0}}{{template \"r\" slice . 1}}{{end}}{{end}}{{template \"r\" .spec.containers}}",
        "map[image:nginx name:web ports:[map[containerPort:80]]]map[image:busybox name:log]",
    ),
    (
        "{{range .spec.containers}}{{if eq .name \"x\"}}{{break}}{{end}}{{.image}}{{end}}",
        "nginxbusybox",
    ),
    (
        "{{range .spec.containers}}{{continue}}{{.image}}{{end}}done",
        "done",
    ),
    (
        "{{range $i, $e := .spec.containers}}{{if $i}},{{end}}{{$e.name}}{{end}}",
        "web,log",
    ),
    ("{{range $i := .metadata.labels}}{{$i}}{{end}}", "webfe"),
    ("{{define \"a\"}}{{end}}{{define \"a\"}}x{{end}}", ""),
    (
        "{{.spec.replicas}} {{.spec.big}} {{.spec.huge}} {{.spec.neg}} {{.spec.ratio}} {{.spec.small}} {{.spec.nums}} {{.spec.mixed}}",
        "3 1000000 1.2345678901234567e+19 -2 0.5 1e-05 [1 2.5 -3] [1 x true <nil> map[k:v] [1 2]]",
    ),
    (
        "{{printf \"%d %d %v %s\" .spec.ratio .spec.replicas .spec.huge .spec.replicas}}",
        "%!d(float64=0.5) 3 1.2345678901234567e+19 %!s(int64=3)",
    ),
    (
        "{{printf \"%T %T %T %T %T %T\" .spec.replicas .spec.ratio .spec.huge .spec.nothing .spec.items .spec.emptymap}}",
        "int64 float64 float64 <nil> []interface {} map[string]interface {}",
    ),
    (
        "{{base64decode .data.token}} {{base64decode .data.empty}} {{printf \"%q\" (base64decode .data.bin)}}",
        "hello world  \"\\xff\"",
    ),
    (
        "{{.metadata.annotations.note}} {{html .metadata.annotations.note}} {{js .metadata.annotations.note}} {{urlquery .metadata.annotations.note}}",
        "a <b> & \"c\" a &lt;b&gt; &amp; &#34;c&#34; a \\u003Cb\\u003E \\u0026 \\\"c\\\" a+%3Cb%3E+%26+%22c%22",
    ),
    (
        "{{.spec.multi}} {{printf \"%q\" .spec.multi}} {{js .spec.multi}}",
        "line1\nline2 \"line1\\nline2\" line1\\u000Aline2",
    ),
    (
        "{{if .spec.nothing}}y{{else}}n{{end}} {{.spec.nothing}} {{printf \"%v\" .spec.nothing}} {{len .spec.emptylist}} {{if .spec.emptymap}}y{{else}}n{{end}} {{.spec.emptylist}} {{.spec.emptymap}}",
        "n <no value> <nil> 0 n [] map[]",
    ),
    (
        "{{range .spec.mixed}}[{{.}}]{{end}} {{range $i, $x := .spec.nums}}{{$i}}:{{$x}},{{end}}",
        "[1][x][true][<no value>][map[k:v]][[1 2]] 0:1,1:2.5,2:-3,",
    ),
    (
        "{{range .spec.emptylist}}x{{else}}empty{{end}} {{range .spec.emptymap}}x{{else}}empty{{end}} {{range .spec.nothing}}x{{else}}nil{{end}}",
        "empty empty nil",
    ),
    (
        "{{index .spec.mixed 3}} {{index .spec.mixed 4 \"k\"}} {{index .spec.mixed 5 1}}",
        "<no value> v 2",
    ),
    (
        "{{slice .spec.items 1 3}} {{slice .spec.items 0 0}} {{slice .spec.items 1 2 3}}",
        "[b c] [] [b]",
    ),
    (
        "{{eq .spec.replicas 3}} {{eq .spec.ratio 0.5}} {{eq .spec.flag true}} {{eq .spec.nothing nil}} {{lt .spec.neg 0}} {{lt .spec.replicas .spec.big}}",
        "true true true true true true",
    ),
    (
        "{{eq .spec.nothing .spec.items}} {{eq .spec.items .nope}}",
        "false false",
    ),
    (
        "{{and 1 0 .nope.x}} {{or 0 \"\" .kind}} {{or 0 \"\"}} {{and 1 2}}",
        "0 ConfigMap  2",
    ),
    ("{{.kind | and 1}} {{0 | or .nope}}", "ConfigMap 0"),
    (
        "{{(.metadata).name}} {{(.metadata.labels).app}} {{(index .spec.containers 1).ports}}",
        "web web <no value>",
    ),
    ("{{(index .spec.containers 1).ports.x}}", "<no value>"),
    ("{{(.nope).x}}", "<no value>"),
    (
        "{{.metadata | len}} {{.kind | printf \"%s!\"}} {{.spec.items | len | printf \"%03d\"}}",
        "4 ConfigMap! 003",
    ),
    ("{{$ := 1}}", ""),
    ("{{$x := 1}}{{if true}}{{$x := 2}}{{$x}}{{end}}{{$x}}", "21"),
    ("{{$x := 1}}{{if true}}{{$x = 2}}{{$x}}{{end}}{{$x}}", "22"),
    ("{{with $x := .kind}}{{$x}}{{end}}", "ConfigMap"),
    (
        "{{range $x := .spec.items}}{{$x}}{{else}}{{$x}}{{end}}",
        "abc",
    ),
    (
        "{{define \"a\"}}{{$}}|{{.}}{{end}}{{template \"a\" .kind}}",
        "ConfigMap|ConfigMap",
    ),
    (
        "{{define \"a\"}}A{{end}}{{define \"b\"}}{{template \"a\"}}B{{end}}{{template \"b\"}}",
        "AB",
    ),
    ("{{define \"output\"}}redefined{{end}}", "redefined"),
    (
        "{{block \"b\" .}}{{.kind}}{{end}}{{template \"b\" .metadata}}",
        "ConfigMap<no value>",
    ),
    (
        "{{range .spec.items}}{{if true}}{{continue}}{{end}}x{{end}}y",
        "y",
    ),
    (
        "{{range .spec.items}}{{with .}}{{break}}{{end}}{{end}}ok",
        "ok",
    ),
    ("{{-3}} {{- 3}} {{3 -}}  x", "-33 3x"),
    ("a \n\t {{- /* c */}} b {{/* c */ -}} \n c", "a b c"),
    ("{{.kind}}{{- \"\\n\" -}}", "ConfigMap\n"),
    ("{{.kind -}}\n\n   next", "ConfigMapnext"),
    ("{{ $x := 1 -}}  {{$x}}", "1"),
    ("{{1 -}}", "1"),
    (
        "{{.kind  }}{{  .kind}}{{ .kind | printf \"%s\"  }}",
        "ConfigMapConfigMapConfigMap",
    ),
    ("{{.kind|printf \"%s\"}}", "ConfigMap"),
    ("{{$x:=1}}{{$x}}", "1"),
    ("{{$.metadata.labels.app}} {{$.nope.x}}", "web <no value>"),
    ("{{.Kind}} {{.metadata.Name}}", "<no value> <no value>"),
    ("{{.1}}", "0.1"),
    (
        "{{0x1.8p1}} {{1_0.5}} {{0b1010}} {{'\\n'}} {{'\\x41'}} {{'\\u00e9'}} {{'é'}} {{'\\''}}",
        "3 10.5 10 10 65 233 233 39",
    ),
    (
        "{{1+2i | printf \"%v %.1f %T\"}} {{(1i)}} {{1+0i}} {{eq 1+0i 1+0i}}",
        "(1+2i) %!f(MISSING) %!T(MISSING) (0+1i) (1+0i) true",
    ),
    (
        "{{\"\\x41\\101\\u00e9\\U0001F600\\a\\b\\f\\v\\\\\\\"\"}}",
        "AAé😀\u{7}\u{8}\u{c}\u{b}\\\"",
    ),
    (
        "{{\"\\xff\" | printf \"%q %x %s|\"}} {{len \"\\xff\"}}",
        "\"\\xff\" %!x(MISSING) %!s(MISSING)| 1",
    ),
    ("{{`a\\nb`}} {{`multi\nline`}}", "a\\nb multi\nline"),
    (
        "{{printf \"%v|%6.2v|%-8v|%08v|%+v\" 3.14159 3.14159 \"ab\" 42 -1}}",
        "3.14159|   3.1|ab      |00000042|-1",
    ),
    (
        "{{printf \"%#v %#v %#v %#v %#v %#v\" 1 1.5 \"s\" true .spec.nothing .spec.mixed}}",
        "1 1.5 \"s\" true <nil> []interface {}{1, \"x\", true, interface {}(nil), map[string]interface {}{\"k\":\"v\"}, []interface {}{1, 2}}",
    ),
    (
        "{{printf \"%x %X %#x %x\" \"hello\" \"hello\" \"hello\" .spec.items}}",
        "68656c6c6f 68656C6C6F 0x68656c6c6f [61 62 63]",
    ),
    (
        "{{printf \"% x|% X|%# x|%-10x|%10x|%.2x\" \"abc\" \"abc\" \"abc\" \"abc\" \"abc\" \"abc\"}}",
        "61 62 63|61 62 63|0x61 0x62 0x63|616263    |    616263|6162",
    ),
    (
        "{{printf \"%q %#q %+q %q\" \"a\\tb\" \"a\\tb\" \"é\\u0001\" .spec.items}}",
        "\"a\\tb\" `a\tb` \"\\u00e9\\x01\" [\"a\" \"b\" \"c\"]",
    ),
    (
        "{{printf \"%d %+d % d %5d %-5d| %05d %x %X %o %O %b %#o %#b\" -42 42 42 -42 -42 -42 -255 255 8 8 5 8 5}}",
        "-42 +42  42   -42 -42  | -0042 -ff FF 10 0o10 101 010 0b101",
    ),
    (
        "{{printf \"%.3d|%8.3d|%08.3d|%.0d|%5.0d|\" 7 7 7 0 0}}",
        "007|     007|     007||     |",
    ),
    (
        "{{printf \"%c %q %U %#U %#U\" 233 233 233 233 10}}",
        "é 'é' U+00E9 U+00E9 'é' U+000A",
    ),
    (
        "{{printf \"%e %E %f %F %g %G\" 123456.789 123456.789 123456.789 123456.789 123456.789 123456.789}}",
        "1.234568e+05 1.234568E+05 123456.789000 123456.789000 123456.789 123456.789",
    ),
    (
        "{{printf \"%g %g %g %g %g %g\" 1e-4 1e-5 100000.0 1000000.0 1e20 1e21}}",
        "0.0001 1e-05 100000 1e+06 1e+20 1e+21",
    ),
    (
        "{{printf \"%.3g %.10g %.0g %#.3g %#g %#.0f %#e\" 1234.5678 1234.5678 1234.5678 1.0 100.0 3.0 1.0}}",
        "1.23e+03 1234.5678 1e+03 1.00 100.000 3. 1.000000e+00",
    ),
    (
        "{{printf \"%8.2f|%-8.2f|%08.2f|%+.2f|% .2f|%+08.2f\" -3.14159 3.14159 -3.14159 3.14159 3.14159 -3.14159}}",
        "   -3.14|3.14    |-0003.14|+3.14| 3.14|-0003.14",
    ),
    (
        "{{printf \"%.2f %.1f %.0f %.0f %.3e\" 0.125 0.25 0.5 1.5 1.0005}}",
        "0.12 0.2 0 2 1.000e+00",
    ),
    (
        "{{printf \"%v %v %v %v\" 0.1 0.3 100.0 1e100}} {{printf \"%.20f\" 0.1}}",
        "0.1 0.3 100 1e+100 0.10000000000000000555",
    ),
    (
        "{{printf \"%x %X %#x %.3x %b\" 3.5 -1e10 1.0 3.14159 0.5}}",
        "0x1.cp+01 -0X1.2A05F2P+33 0x1.0000p+00 0x1.922p+01 4503599627370496p-53",
    ),
    ("{{printf \"%6.2f%%|%%d|%-%|%5%\" 99.5}}", " 99.50%|%d|%|%"),
    (
        "{{printf \"%s %d\" \"a\"}} {{printf \"%[1]d %[1]x %[2]s\" 10 \"z\"}} {{printf \"%[3]d\" 1}} {{printf \"%[0]d\" 1}} {{printf \"%[x]d\" 1}}",
        "a %!d(MISSING) 10 a z %!d(BADINDEX) %!d(BADINDEX) %!d(BADINDEX)",
    ),
    (
        "{{printf \"%.*d|%*s|%-*s|\" 3 7 -5 \"a\" 4 \"b\"}} {{printf \"%*d\" \"x\" 1}} {{printf \"%.*d\" -1 5}} {{printf \"%*d\" 10000000 1}}",
        "007|a    |b   | %!(BADWIDTH)1 %!(BADPREC)5 %!(BADWIDTH)1",
    ),
    (
        "{{printf \"%z %!\" 1}} {{printf \"%\"}} {{printf \"%.\"}} {{printf \"%5\"}} {{printf \"%-\" 1}}",
        "%!z(int=1) %!!(MISSING) %!(NOVERB) %!.(MISSING) %!(NOVERB) %!(NOVERB)%!(EXTRA int=1)",
    ),
    (
        "{{printf \"%s\" 1 2 .kind .nope}}",
        "%!s(int=1)%!(EXTRA int=2, string=ConfigMap, <nil>)",
    ),
    (
        "{{printf \"%t %t %s %d\" true 1 true false}}",
        "true %!t(int=1) %!s(bool=true) %!d(bool=false)",
    ),
    (
        "{{printf \"%v %s %d\" .spec.mixed .spec.mixed .spec.mixed}}",
        "[1 x true <nil> map[k:v] [1 2]] [%!s(int64=1) x %!s(bool=true) <nil> map[k:v] [%!s(int64=1) %!s(int64=2)]] [1 %!d(string=x) %!d(bool=true) <nil> map[%!d(string=k):%!d(string=v)] [1 2]]",
    ),
    (
        "{{printf \"%v %+v %#v %T\" .spec.emptylist .spec.emptymap .spec.emptymap .spec.emptylist}}",
        "[] map[] map[string]interface {}{} []interface {}",
    ),
    (
        "{{printf \"%5v|%-12v|%5s\" .spec.items .spec.items .spec.mixed}}",
        "[    a     b     c]|[a            b            c           ]|[%!s(int64=    1)     x %!s(bool= true) <nil> map[    k:    v] [%!s(int64=    1) %!s(int64=    2)]]",
    ),
    (
        "{{printf \"%w %w\" .kind .spec.items}}",
        "%!w(string=ConfigMap) %!w([]interface {}=[a b c])",
    ),
    (
        "{{printf \"%5.1q|%.1s|%.0s|\" \"héllo\" \"héllo\" \"x\"}}",
        "  \"h\"|h||",
    ),
    (
        "{{print}} {{print 1 2}} {{print \"a\" 1 2 \"b\"}} {{print nil 1}} {{print .nope .nope}}",
        " 1 2 a1 2b <nil> 1 <nil> <nil>",
    ),
    (
        "{{println}}|{{println .spec.items .spec.nothing 1.5}}",
        "\n|[a b c] <nil> 1.5\n",
    ),
    (
        "{{html}}|{{html 1 2}}|{{html \"a\" \"<\" 1 2}}|{{js 1 \"'\"}}|{{urlquery \"a+b\" \"/\" 1.5}}|{{urlquery}}",
        "|1 2|a&lt;1 2|1\\'|a%2Bb%2F1.5|",
    ),
    (
        "{{js \"\\u2028\\u00e9\\x01\\t=\"}} {{html \"\\x00\"}}",
        "\\u2028é\\u0001\\u0009\\u003D �",
    ),
    (
        "{{urlquery \"-_.~!*'();:@&=+$,/?#[] é\"}}",
        "-_.~%21%2A%27%28%29%3B%3A%40%26%3D%2B%24%2C%2F%3F%23%5B%5D+%C3%A9",
    ),
    (
        "{{not 0}} {{not \"\"}} {{not .spec.emptylist}} {{not .spec.items}} {{not 0.0}} {{not .spec.nothing}} {{not 1+0i}}",
        "true true true false true true false",
    ),
    (
        "{{if and .kind (eq .kind \"ConfigMap\") (gt (len .data) 1)}}many{{end}}",
        "many",
    ),
    (
        "{{le 2 2}} {{ge 2 3}} {{gt \"b\" \"a\"}} {{ge 1.5 1.5}} {{le .spec.neg .spec.replicas}}",
        "true false true true true",
    ),
    (
        "{{eq 'a' 97}} {{eq (index \"a\" 0) 97}} {{lt (index \"a\" 0) 98}} {{eq (index \"a\" 0) 'a'}}",
        "true true true true",
    ),
    (
        "{{index \"abc\" 1 | printf \"%v %T %c %d\"}}",
        "98 %!T(MISSING) %!c(MISSING) %!d(MISSING)",
    ),
    ("{{if .kind}}\n{{.a\n\n}}\n{{end}}", "\n<no value>\n"),
    (
        "{{define \"a\"}}{{end}}{{define \"b\"}}{{.kind}}{{end}}\n{{- template \"b\" . -}}\n",
        "ConfigMap",
    ),
    (
        "{{\t.kind\t}}|{{\r.kind\r}}|{{\n.kind\n}}",
        "ConfigMap|ConfigMap|ConfigMap",
    ),
    ("{{.kind\t-}}  x", "ConfigMapx"),
    ("{{.kind -}}\t\r\n x {{- \"y\"}}", "ConfigMapxy"),
    (
        "{{with .nope}}1{{else with .nope2}}2{{else with .kind}}3{{.}}{{else}}4{{end}}",
        "3ConfigMap",
    ),
    (
        "{{range .spec.items}}{{with .}}{{if eq . \"b\"}}{{continue}}{{end}}{{.}}{{end}}{{end}}",
        "ac",
    ),
    (
        "{{range $i, $x := .spec.items}}{{if eq $i 1}}{{break}}{{end}}{{$x}}{{end}}|{{range .spec.emptylist}}{{else}}e{{end}}",
        "a|e",
    ),
    (
        "{{range $k, $v := .metadata}}{{$k}};{{end}}",
        "annotations;labels;name;namespace;",
    ),
    (
        "{{range $k := .spec.items}}{{$k}}{{end}} {{range $i, $e := .metadata.labels}}{{$i}}={{$e}} {{end}}",
        "abc app=web tier=fe ",
    ),
    (
        "{{$x := .spec.items}}{{range $x}}{{$x}}{{end}}",
        "[a b c][a b c][a b c]",
    ),
    (
        "{{range .spec.containers}}{{$.kind}}:{{.name}} {{end}}",
        "ConfigMap:web ConfigMap:log ",
    ),
    (
        "{{$a := 1}}{{range .spec.items}}{{$a = .}}{{end}}{{$a}}",
        "c",
    ),
    ("{{$a := 1}}{{with .kind}}{{$a = 2}}{{end}}{{$a}}", "2"),
    ("{{$a := 1}}{{with .kind}}{{$a := 2}}{{end}}{{$a}}", "1"),
    (
        "{{template \"x\" 1}}{{define \"x\"}}{{.}}{{$}}{{end}}",
        "11",
    ),
    ("{{with $x := 1}}{{$x}}{{end}}", "1"),
    ("{{if $x := .kind}}{{$x}}{{end}}", "ConfigMap"),
    (
        "{{if $x := .nope}}{{$x}}{{else}}{{$x}}{{end}}",
        "<no value>",
    ),
    (
        "{{index (index .spec.containers 0).ports 0 | printf \"%v\"}}",
        "map[containerPort:80]",
    ),
    (
        "{{printf \"%v\" .spec.mixed}} {{printf \"%q\" .spec.mixed}} {{printf \"%x\" .spec.nums}} {{printf \"%5.1f\" .spec.nums}} {{printf \"%t\" .spec.mixed}}",
        "[1 x true <nil> map[k:v] [1 2]] ['\\x01' \"x\" %!q(bool=true) <nil> map[\"k\":\"v\"] ['\\x01' '\\x02']] [1 0x1.4p+01 -3] [%!f(int64=    1)   2.5 %!f(int64=   -3)] [%!t(int64=1) %!t(string=x) true <nil> map[%!t(string=k):%!t(string=v)] [%!t(int64=1) %!t(int64=2)]]",
    ),
    (
        "{{printf \"%s\" .metadata}} {{printf \"%d\" .metadata.labels}} {{printf \"%v\" .spec.emptymap}} {{printf \"%+v\" .spec.containers}}",
        "map[annotations:map[note:a <b> & \"c\"] labels:map[app:web tier:fe] name:web namespace:team] map[%!d(string=app):%!d(string=web) %!d(string=tier):%!d(string=fe)] map[] [map[image:nginx name:web ports:[map[containerPort:80]]] map[image:busybox name:log]]",
    ),
    (
        "{{printf \"%c%c%c\" 72 105 33}} {{printf \"%q\" 0x1F600}} {{printf \"%+q\" 0x1F600}} {{printf \"%U\" 0x1F600}} {{printf \"%x\" -1}} {{printf \"%o\" -8}}",
        "Hi! '😀' '\\U0001f600' U+1F600 -1 -10",
    ),
    (
        "{{printf \"%08b|%-8b|%#08x|%# x\" 5 5 255 255}}",
        "00000101|101     |0x000000ff| 0xff",
    ),
    (
        "{{printf \"%.3s|%.10s|%5.2s|\" \"héllo\" \"hi\" \"héllo\"}}",
        "hél|hi|   hé|",
    ),
    (
        "{{printf \"%g|%g|%g|%g\" 0.0 -0.0 1e-300 123456789.0}} {{printf \"%.2e|%.0f|%5.1g\" 9.995 2.5 0.000123}}",
        "0|-0|1e-300|1.23456789e+08 9.99e+00|2|0.0001",
    ),
    (
        "{{printf \"%v %v\" 1.0e6 123456.0}} {{1e6}} {{123456.7}} {{0.000001}} {{1e-7}}",
        "1e+06 123456 1e+06 123456.7 1e-06 1e-07",
    ),
    (
        "{{print .spec.small .spec.ratio .spec.huge .spec.big .spec.neg}}",
        "1e-05 0.5 1.2345678901234567e+19 1000000 -2",
    ),
    (
        "{{printf \"%e %f %g %v %d %x\" .spec.huge .spec.huge .spec.huge .spec.huge .spec.huge .spec.big}}",
        "1.234568e+19 12345678901234567168.000000 1.2345678901234567e+19 1.2345678901234567e+19 %!d(float64=1.2345678901234567e+19) f4240",
    ),
    (
        "{{js \"\\u007f\\u0080\\ufeff\"}} {{html \"a\\x00b\"}} {{urlquery \"\\x00\\xff\"}}",
        "\u{7f}\\u0080\\uFEFF a�b %00%FF",
    ),
    (
        "{{index .data \"token\" | base64decode}} {{.data.token | base64decode | len}}",
        "hello world 11",
    ),
    ("{{base64decode \"YR==\"}}", "a"),
];

pub(super) const OUTPUTS_STRICT: &[Case] = &[
    ("{{index .metadata \"nope\"}}", "<no value>"),
    ("{{exists . \"nope\"}} {{.kind}}", "false ConfigMap"),
];

pub(super) const EXEC_ERRORS: &[ErrCase] = &[
    (
        "{{len .items}}",
        "",
        "template: output:1:2: executing \"output\" at <len .items>: error calling len: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        "{{len .nope}}",
        "",
        "template: output:1:2: executing \"output\" at <len .nope>: error calling len: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        "{{index .nope 1}}",
        "",
        "template: output:1:2: executing \"output\" at <index .nope 1>: error calling index: index of untyped nil",
    ),
    (
        "{{index .spec.containers 5}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec.containers 5>: error calling index: index out of range: 5",
    ),
    (
        "{{slice .kind 2 1}}",
        "",
        "template: output:1:2: executing \"output\" at <slice .kind 2 1>: error calling slice: invalid slice index: 2 > 1",
    ),
    (
        "{{slice .kind 0 10}}",
        "",
        "template: output:1:2: executing \"output\" at <slice .kind 0 10>: error calling slice: index out of range: 10",
    ),
    (
        "{{eq 1 1.0}}",
        "",
        "template: output:1:2: executing \"output\" at <eq 1 1.0>: error calling eq: incompatible types for comparison",
    ),
    (
        "{{eq .kind 1}}",
        "",
        "template: output:1:2: executing \"output\" at <eq .kind 1>: error calling eq: incompatible types for comparison",
    ),
    (
        "{{eq .metadata .metadata}}",
        "",
        "template: output:1:2: executing \"output\" at <eq .metadata .metadata>: error calling eq: non-comparable type map[annotations:map[note:a <b> & \"c\"] labels:map[app:web tier:fe] name:web namespace:team]: map[string]interface {}",
    ),
    (
        "{{lt .nope 1}}",
        "",
        "template: output:1:2: executing \"output\" at <lt .nope 1>: error calling lt: invalid type for comparison",
    ),
    (
        "{{lt true false}}",
        "",
        "template: output:1:2: executing \"output\" at <lt true false>: error calling lt: invalid type for comparison",
    ),
    (
        "{{base64decode \"aGVsbG8$\"}}",
        "",
        "template: output:1:2: executing \"output\" at <base64decode \"aGVsbG8$\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 7",
    ),
    (
        "{{base64decode \"aGVsbG8\"}}",
        "",
        "template: output:1:2: executing \"output\" at <base64decode \"aGVsbG8\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 4",
    ),
    (
        "{{base64decode 3}}",
        "",
        "template: output:1:15: executing \"output\" at <3>: expected string; found 3",
    ),
    (
        "{{base64decode .nope}}",
        "",
        "template: output:1:15: executing \"output\" at <.nope>: invalid value; expected string",
    ),
    (
        "{{call .kind}}",
        "",
        "template: output:1:2: executing \"output\" at <call .kind>: error calling call: non-function .kind of type string",
    ),
    (
        "{{call .nope}}",
        "",
        "template: output:1:2: executing \"output\" at <call .nope>: error calling call: call of nil",
    ),
    (
        "{{.kind | call}}",
        "",
        "caught panic: runtime error: index out of range [0] with length 0",
    ),
    (
        "{{nil}}",
        "",
        "template: output:1:2: executing \"output\" at <nil>: nil is not a command",
    ),
    (
        "{{.kind 1}}",
        "",
        "template: output:1:2: executing \"output\" at <.kind>: kind is not a method but has arguments",
    ),
    (
        "{{$x := 1}}{{$x 2}}",
        "",
        "template: output:1:13: executing \"output\" at <$x>: can't give argument to non-function $x",
    ),
    (
        "{{.metadata.name.x}}",
        "",
        "template: output:1:11: executing \"output\" at <.metadata.name.x>: can't evaluate field x in type interface {}",
    ),
    (
        "{{$n := .metadata.name}}{{$n.x}}",
        "",
        "template: output:1:28: executing \"output\" at <$n.x>: can't evaluate field x in type string",
    ),
    (
        "{{$c := .spec.containers}}{{$c.x}}",
        "",
        "template: output:1:30: executing \"output\" at <$c.x>: can't evaluate field x in type []interface {}",
    ),
    (
        "{{template \"x\"}}",
        "",
        "template: output:1:11: executing \"output\" at <{{template \"x\"}}>: template \"x\" not defined",
    ),
    (
        "{{range 3}}{{.}}{{end}}",
        "",
        "template: output:1:8: executing \"output\" at <3>: range can't iterate over 3",
    ),
    (
        "{{range .kind}}{{.}}{{end}}",
        "",
        "template: output:1:8: executing \"output\" at <.kind>: range can't iterate over ConfigMap",
    ),
    (
        "{{$x = 1}}",
        "",
        "template: output:1:7: executing \"output\" at <1>: undefined variable: $x",
    ),
    (
        "{{.metadata.name}}\n{{.nope.x}}\n{{len 3}}",
        "web\n<no value>\n",
        "template: output:3:2: executing \"output\" at <len 3>: error calling len: len of type int",
    ),
    (
        "{{range $k, $v := .data}}{{$k}}={{base64decode $v}};{{end}}",
        "bad=",
        "template: output:1:34: executing \"output\" at <base64decode $v>: error calling base64decode: base64 decode failed: illegal base64 data at input byte 7",
    ),
    (
        "{{.spec.nothing.x}}",
        "",
        "template: output:1:7: executing \"output\" at <.spec.nothing.x>: nil pointer evaluating interface {}.x",
    ),
    (
        "{{index .spec.mixed 3 \"x\"}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec.mixed 3 \"x\">: error calling index: index of nil pointer",
    ),
    (
        "{{index .spec \"replicas\" 0}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec \"replicas\" 0>: error calling index: can't index item of type int64",
    ),
    (
        "{{index .spec.items .spec.replicas}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec.items .spec.replicas>: error calling index: reflect: slice index out of range",
    ),
    (
        "{{index .spec.items 1.0}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec.items 1.0>: error calling index: cannot index slice/array with type float64",
    ),
    (
        "{{index .spec.items \"a\"}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec.items \"a\">: error calling index: cannot index slice/array with type string",
    ),
    (
        "{{index .spec 1}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec 1>: error calling index: value has type int; should be string",
    ),
    (
        "{{index .spec nil}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec nil>: error calling index: value is nil; should be of type string",
    ),
    (
        "{{index .spec.items 3}}",
        "",
        "template: output:1:2: executing \"output\" at <index .spec.items 3>: error calling index: reflect: slice index out of range",
    ),
    (
        "{{slice .spec.items .spec.neg}}",
        "",
        "template: output:1:2: executing \"output\" at <slice .spec.items .spec.neg>: error calling slice: cannot index slice/array with type interface {}",
    ),
    (
        "{{$n := .spec.replicas}}{{slice .spec.items 0 $n}} {{slice .spec.items 0 .spec.replicas}}",
        "[a b c] ",
        "template: output:1:53: executing \"output\" at <slice .spec.items 0 .spec.replicas>: error calling slice: cannot index slice/array with type interface {}",
    ),
    (
        "{{slice .kind 1 2 3}}",
        "",
        "template: output:1:2: executing \"output\" at <slice .kind 1 2 3>: error calling slice: cannot 3-index slice a string",
    ),
    (
        "{{slice .spec 1}}",
        "",
        "template: output:1:2: executing \"output\" at <slice .spec 1>: error calling slice: can't slice item of type map[string]interface {}",
    ),
    (
        "{{slice .nope}}",
        "",
        "template: output:1:2: executing \"output\" at <slice .nope>: error calling slice: slice of untyped nil",
    ),
    (
        "{{slice .spec.items 1 2 3 4}}",
        "",
        "template: output:1:2: executing \"output\" at <slice .spec.items 1 2 3 4>: error calling slice: too many slice indexes: 4",
    ),
    (
        "{{len .spec.replicas}}",
        "",
        "template: output:1:2: executing \"output\" at <len .spec.replicas>: error calling len: len of type int64",
    ),
    (
        "{{len .spec.nothing}}",
        "",
        "template: output:1:2: executing \"output\" at <len .spec.nothing>: error calling len: len of nil pointer",
    ),
    (
        "{{eq .spec.ratio 1}}",
        "",
        "template: output:1:2: executing \"output\" at <eq .spec.ratio 1>: error calling eq: incompatible types for comparison",
    ),
    (
        "{{eq .spec.items .spec.items}}",
        "",
        "template: output:1:2: executing \"output\" at <eq .spec.items .spec.items>: error calling eq: non-comparable type [a b c]: []interface {}",
    ),
    (
        "{{eq .spec.items .metadata}}",
        "",
        "template: output:1:2: executing \"output\" at <eq .spec.items .metadata>: error calling eq: non-comparable types [a b c]: []interface {}, map[string]interface {}: map[annotations:map[note:a <b> & \"c\"] labels:map[app:web tier:fe] name:web namespace:team]",
    ),
    (
        "{{eq}}",
        "",
        "template: output:1:2: executing \"output\" at <eq>: wrong number of args for eq: want at least 1 got 0",
    ),
    (
        "{{eq 1}}",
        "",
        "template: output:1:2: executing \"output\" at <eq 1>: error calling eq: missing argument for comparison",
    ),
    (
        "{{ne 1}}",
        "",
        "template: output:1:2: executing \"output\" at <ne>: wrong number of args for ne: want 2 got 1",
    ),
    (
        "{{ne 1 2 3}}",
        "",
        "template: output:1:2: executing \"output\" at <ne>: wrong number of args for ne: want 2 got 3",
    ),
    (
        "{{not}}",
        "",
        "template: output:1:2: executing \"output\" at <not>: wrong number of args for not: want 1 got 0",
    ),
    (
        "{{and}}",
        "",
        "template: output:1:2: executing \"output\" at <and>: wrong number of args for and: want at least 1 got 0",
    ),
    (
        "{{len}}",
        "",
        "template: output:1:2: executing \"output\" at <len>: wrong number of args for len: want 1 got 0",
    ),
    (
        "{{printf}}",
        "",
        "template: output:1:2: executing \"output\" at <printf>: wrong number of args for printf: want at least 1 got 0",
    ),
    (
        "{{printf 3}}",
        "",
        "template: output:1:9: executing \"output\" at <3>: expected string; found 3",
    ),
    (
        "{{printf .spec.replicas}}",
        "",
        "template: output:1:14: executing \"output\" at <.spec.replicas>: wrong type for value; expected string; got int64",
    ),
    (
        "{{printf .nope}}",
        "",
        "template: output:1:9: executing \"output\" at <.nope>: invalid value; expected string",
    ),
    (
        "{{printf .spec.nothing}}",
        "",
        "template: output:1:14: executing \"output\" at <.spec.nothing>: wrong type for value; expected string; got interface {}",
    ),
    (
        "{{printf \"%s\" nil}} {{print nil}} {{html nil}} {{len nil}}",
        "%!s(<nil>) <nil> &lt;no value&gt; ",
        "template: output:1:49: executing \"output\" at <len nil>: error calling len: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        "{{index nil 1}}",
        "",
        "template: output:1:2: executing \"output\" at <index nil 1>: error calling index: index of untyped nil",
    ),
    (
        "{{base64decode nil}}",
        "",
        "template: output:1:15: executing \"output\" at <nil>: cannot assign nil to string",
    ),
    (
        "{{(1).x}}",
        "",
        "template: output:1:3: executing \"output\" at <1>: can't evaluate field x in type int",
    ),
    (
        "{{(nil).x}}",
        "",
        "template: output:1:3: executing \"output\" at <nil>: nil is not a command",
    ),
    (
        "{{(1 2)}}",
        "",
        "template: output:1:3: executing \"output\" at <1>: can't give argument to non-function 1",
    ),
    (
        "{{(printf \"x\") 2}}",
        "",
        "template: output:1:2: executing \"output\" at <(printf \"x\") 2>: can't give argument to non-function printf \"x\"",
    ),
    (
        "{{.kind | .metadata}}",
        "",
        "template: output:1:10: executing \"output\" at <.metadata>: metadata is not a method but has arguments",
    ),
    (
        "{{.kind | $}}",
        "",
        "template: output:1:10: executing \"output\" at <$>: can't give argument to non-function $",
    ),
    (
        "{{template \"a\" 1 2}}",
        "",
        "template: output:1:11: executing \"output\" at <{{template \"a\" 1 2}}>: template \"a\" not defined",
    ),
    (
        "{{range .spec.items}}{{range $.spec.nums}}{{if eq . 2.5}}{{break}}{{end}}{{.}}{{end}};{{end}}",
        "",
        "template: output:1:47: executing \"output\" at <eq . 2.5>: error calling eq: incompatible types for comparison",
    ),
    (
        "{{.metadata.labels.app.x.y}}",
        "",
        "template: output:1:11: executing \"output\" at <.metadata.labels.app.x.y>: can't evaluate field x in type interface {}",
    ),
    (
        "{{9223372036854775807}} {{-9223372036854775808}} {{9223372036854775808}}",
        "9223372036854775807 -9223372036854775808 ",
        "template: output:1:51: executing \"output\" at <9223372036854775808>: 9223372036854775808 overflows int",
    ),
    (
        "{{18446744073709551615}}",
        "",
        "template: output:1:2: executing \"output\" at <18446744073709551615>: 18446744073709551615 overflows int",
    ),
    (
        "{{exists .spec \"items\" 0}} {{exists .spec \"items\" 5}} {{exists .spec \"items\" \"a\"}} {{exists .spec \"nothing\"}} {{exists .spec \"nothing\" \"x\"}} {{exists .kind 0}} {{exists .kind 9}} {{exists .spec \"replicas\" 0}} {{exists .spec nil}} {{exists .spec.items 1.0}} {{exists}}",
        "true false false false false true false false false false ",
        "template: output:1:259: executing \"output\" at <exists>: wrong number of args for exists: want at least 1 got 0",
    ),
    (
        "{{lt 1 2.0}} ",
        "",
        "template: output:1:2: executing \"output\" at <lt 1 2.0>: error calling lt: incompatible types for comparison",
    ),
    (
        "{{lt \"a\" 1}}",
        "",
        "template: output:1:2: executing \"output\" at <lt \"a\" 1>: error calling lt: incompatible types for comparison",
    ),
    (
        "{{le 1+0i 2+0i}}",
        "",
        "template: output:1:2: executing \"output\" at <le 1+0i 2+0i>: error calling le: invalid type for comparison",
    ),
    (
        "{{call}}",
        "",
        "template: output:1:2: executing \"output\" at <call>: wrong number of args for call: want at least 1 got 0",
    ),
    (
        "{{call 1}} ",
        "",
        "template: output:1:2: executing \"output\" at <call 1>: error calling call: non-function 1 of type int",
    ),
    (
        "{{call (index .spec.mixed 3)}}",
        "",
        "template: output:1:2: executing \"output\" at <call (index .spec.mixed 3)>: error calling call: call of nil",
    ),
    (
        "{{call .spec.items 1 2}}",
        "",
        "template: output:1:2: executing \"output\" at <call .spec.items 1 2>: error calling call: non-function .spec.items of type []interface {}",
    ),
    (
        "{{call nil}}",
        "",
        "template: output:1:2: executing \"output\" at <call nil>: error calling call: call of nil",
    ),
    (
        "{{\"x\" | call \"y\"}}",
        "",
        "template: output:1:8: executing \"output\" at <call \"y\">: error calling call: non-function \"y\" of type string",
    ),
    (
        "a\n  b {{.kind}}\n{{.nope.x | printf \"%s\" | len}}\n  {{len .spec.replicas}}",
        "a\n  b ConfigMap\n10\n  ",
        "template: output:4:4: executing \"output\" at <len .spec.replicas>: error calling len: len of type int64",
    ),
    (
        "l1\nl2 {{if .kind}}\n  {{- range .spec.items}}\n    {{.}} {{len 3}}\n  {{- end}}\n{{end}}",
        "l1\nl2 \n    a ",
        "template: output:4:12: executing \"output\" at <len 3>: error calling len: len of type int",
    ),
    (
        "x\n{{`raw\nstring`}} {{3 4\n}}",
        "x\nraw\nstring ",
        "template: output:3:12: executing \"output\" at <3>: can't give argument to non-function 3",
    ),
    (
        "\n{{define \"a\"}}\n{{.x.y}}\n{{end}}\n{{template \"a\" .spec.items}}",
        "\n\n\n",
        "template: output:3:4: executing \"a\" at <.x.y>: can't evaluate field x in type []interface {}",
    ),
    (
        "{{(.spec).items}} {{(index .spec.containers 0).name | len}} {{((.spec.containers)).x}}",
        "[a b c] 3 ",
        "template: output:1:69: executing \"output\" at <.spec.containers>: can't evaluate field x in type []interface {}",
    ),
    (
        "{{(len .kind).x}}",
        "",
        "template: output:1:7: executing \"output\" at <.kind>: can't evaluate field x in type int",
    ),
    (
        "{{len.x}}",
        "",
        "template: output:1:2: executing \"output\" at <len>: wrong number of args for len: want 1 got 0",
    ),
    (
        "{{base64decode \"YQ==\\n\"}} {{base64decode \"YQ\\r\\n==\"}} {{base64decode \"Y Q==\"}}",
        "a a ",
        "template: output:1:56: executing \"output\" at <base64decode \"Y Q==\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 1",
    ),
    (
        "{{base64decode \"YQ=\"}}",
        "",
        "template: output:1:2: executing \"output\" at <base64decode \"YQ=\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 3",
    ),
    (
        "{{base64decode \"YQ==YQ==\"}}",
        "",
        "template: output:1:2: executing \"output\" at <base64decode \"YQ==YQ==\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 4",
    ),
    (
        "{{base64decode \"=\"}}",
        "",
        "template: output:1:2: executing \"output\" at <base64decode \"=\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 0",
    ),
];

pub(super) const EXEC_ERRORS_STRICT: &[ErrCase] = &[
    (
        "{{.a}}\n{{/* x\ny */}}\n{{.b.c.d}}",
        "",
        "template: output:1:2: executing \"output\" at <.a>: map has no entry for key \"a\"",
    ),
    (
        "x {{.metadata.name}} {{.nope}}",
        "x web ",
        "template: output:1:23: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{.metadata.nope.x}}",
        "",
        "template: output:1:11: executing \"output\" at <.metadata.nope.x>: map has no entry for key \"nope\"",
    ),
    (
        "{{with .nope}}{{end}}",
        "",
        "template: output:1:7: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{template \"t\"}}{{define \"t\"}}{{.x}}{{end}}",
        "",
        "template: output:1:32: executing \"t\" at <.x>: nil data; no entry for key \"x\"",
    ),
    (
        "{{$x := .metadata}}{{$x.nope}}",
        "",
        "template: output:1:23: executing \"output\" at <$x.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{.metadata.creationTimestamp.x}}",
        "",
        "template: output:1:11: executing \"output\" at <.metadata.creationTimestamp.x>: map has no entry for key \"creationTimestamp\"",
    ),
    (
        "{{if .nope}}y{{else}}n{{end}}",
        "",
        "template: output:1:5: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{(.nope).x}}",
        "",
        "template: output:1:3: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{.kind.x.y}}",
        "",
        "template: output:1:7: executing \"output\" at <.kind.x.y>: can't evaluate field x in type interface {}",
    ),
    (
        "{{$.nope}}",
        "",
        "template: output:1:3: executing \"output\" at <$.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{$x := .nope}}{{$x}}",
        "",
        "template: output:1:8: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{range .nope}}{{end}}",
        "",
        "template: output:1:8: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{exists . \"a\"}}{{index . \"zz\" | printf \"%v\"}}{{eq .nope .nope}}",
        "false<nil>",
        "template: output:1:51: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
    ),
    (
        "{{/*\n*/}}\n{{.a.b}}",
        "\n",
        "template: output:3:4: executing \"output\" at <.a.b>: map has no entry for key \"a\"",
    ),
];

pub(super) const PARSE_ERRORS: &[Case] = &[
    ("{{.metadata.name", "template: output:1: unclosed action"),
    (
        "{{.metadata.name}",
        "template: output:1: bad character U+007D '}'",
    ),
    ("{{}}", "template: output:1: missing value for command"),
    (
        "{{foo}}",
        "template: output:1: function \"foo\" not defined",
    ),
    ("{{$x}}", "template: output:1: undefined variable \"$x\""),
    ("{{if .x}}", "template: output:1: unexpected EOF"),
    ("{{end}}", "template: output:1: unexpected {{end}}"),
    ("{{else}}", "template: output:1: unexpected {{else}}"),
    (
        "{{if 1}}{{else}}{{else}}{{end}}",
        "template: output:1: expected end; found {{else}}",
    ),
    (
        "{{range}}{{end}}",
        "template: output:1: missing value for range",
    ),
    (
        "{{break}}",
        "template: output:1: {{break}} outside {{range}}",
    ),
    (
        "{{range .x}}{{break 1}}{{end}}",
        "template: output:1: unexpected \"1\" in {{break}}",
    ),
    (
        "{{\"unterminated}}",
        "template: output:1: unterminated quoted string",
    ),
    (
        "{{`unterminated}}",
        "template: output:1: unterminated raw quoted string",
    ),
    (
        "{{'ab'}}",
        "template: output:1: malformed character constant: 'ab'",
    ),
    ("{{''}}", "template: output:1: invalid syntax"),
    ("{{1x}}", "template: output:1: bad number syntax: \"1x\""),
    ("{{.a.}}", "template: output:1: unexpected <.> in operand"),
    (
        "{{\"a\".b}}",
        "template: output:1: unexpected . after term \"\\\"a\\\"\"",
    ),
    (
        "{{3 | 4}}",
        "template: output:1: non executable command in pipeline stage 2",
    ),
    (
        "{{.a | \"x\"}}",
        "template: output:1: non executable command in pipeline stage 2",
    ),
    ("{{(1}}", "template: output:1: unclosed left paren"),
    ("{{1)}}", "template: output:1: unexpected right paren"),
    ("{{@}}", "template: output:1: unexpected \"@\" in command"),
    ("{{é}}", "template: output:1: function \"é\" not defined"),
    (
        "{{define \"a\"}}x{{end}}{{define \"a\"}}y{{end}}",
        "template: output:1: template: multiple definition of template \"a\"",
    ),
    (
        "{{template .x}}",
        "template: output:1: unexpected \".x\" in template clause",
    ),
    (
        "{{$x, $y := 1}}",
        "template: output:1: too many declarations in command",
    ),
    (
        "{{range $x, $y, $z := .a}}{{end}}",
        "template: output:1: too many declarations in range",
    ),
    (
        "{{range $x, 1 := .a}}{{end}}",
        "template: output:1: range can only initialize variables",
    ),
    ("{{\"\\q\"}}", "template: output:1: invalid syntax"),
    (
        "{{99999999999999999999}}",
        "template: output:1: integer overflow: \"99999999999999999999\"",
    ),
    ("{{/* unclosed", "template: output:1: unclosed comment"),
    (
        "{{/* a */ x}}",
        "template: output:1: comment ends before closing delimiter",
    ),
    ("{{.a :}}", "template: output:1: expected :="),
    (
        "{{.a = 1}}",
        "template: output:1: unexpected \"=\" in operand",
    ),
    (
        "{{with .a}}{{else if .b}}{{end}}",
        "template: output:1: unexpected <if> in input",
    ),
    (
        "line1\n{{if .x}}\n{{.a\n}}",
        "template: output:4: unexpected EOF",
    ),
    (
        "a\nb\n{{.metadata.name}} {{\n  index .metadata \"name\"\n}}\n{{3 | 4}}",
        "template: output:6: non executable command in pipeline stage 2",
    ),
    ("\n\n{{if}}", "template: output:3: missing value for if"),
    ("{{if 1}}\n\n{{end", "template: output:3: unclosed action"),
    (
        "{{\"abc\ndef\"}}",
        "template: output:1: unterminated quoted string",
    ),
    (
        "{{range $i, $e := .spec.items}}{{$i}}{{end}}{{$i}}",
        "template: output:1: undefined variable \"$i\"",
    ),
    (
        "{{range $i, $e := .spec.items}}{{end}}{{$e}}",
        "template: output:1: undefined variable \"$e\"",
    ),
    (
        "{{define \"a\"}}{{$x}}{{end}}",
        "template: output:1: undefined variable \"$x\"",
    ),
    (
        "top{{define \"output\"}}redefined{{end}}",
        "template: output:1: template: multiple definition of template \"output\"",
    ),
    (
        "{{block \"b\"}}{{end}}",
        "template: output:1: missing value for block clause",
    ),
    (
        "{{block 1 .}}{{end}}",
        "template: output:1: unexpected \"1\" in block clause",
    ),
    (
        "{{define 1}}{{end}}",
        "template: output:1: unexpected \"1\" in define clause",
    ),
    (
        "{{define \"a\" 1}}{{end}}",
        "template: output:1: unexpected \"1\" in define clause",
    ),
    (
        "{{define \"a\"}}{{else}}{{end}}",
        "template: output:1: unexpected {{else}} in define clause",
    ),
    (
        "{{if 1}}{{define \"a\"}}{{end}}{{end}}",
        "template: output:1: unexpected <define> in command",
    ),
    (
        "{{range .spec.items}}{{break}}{{else}}{{break}}{{end}}",
        "template: output:1: {{break}} outside {{range}}",
    ),
    (
        "{{ .kind }}|{{- .kind -}}|{{- .kind}}|{{.kind -}}|{{-.kind}}",
        "template: output:1: bad number syntax: \"-.k\"",
    ),
    (
        "{{/*x*/-}} y",
        "template: output:1: comment ends before closing delimiter",
    ),
    (
        "{{ /* x */ }}",
        "template: output:1: unexpected \"/\" in command",
    ),
    (
        "{{ - .kind}}",
        "template: output:1: illegal number syntax: \"-\"",
    ),
    ("{{$x :1}}", "template: output:1: undefined variable \"$x\""),
    (
        "{{$x.y := 1}}",
        "template: output:1: undefined variable \"$x\"",
    ),
    (
        "{{.kind.}}",
        "template: output:1: unexpected <.> in operand",
    ),
    (
        "{{..kind}}",
        "template: output:1: unexpected . after term \".\"",
    ),
    (
        "{{.5}} {{-.5}} {{+1}} {{1.}} {{0x1p-2}} {{1e-3}} {{0777}} {{0x_1F}} {{1__0}}",
        "template: output:1: illegal number syntax: \"1__0\"",
    ),
    (
        "{{18446744073709551616}}",
        "template: output:1: integer overflow: \"18446744073709551616\"",
    ),
    (
        "{{1e400}}",
        "template: output:1: illegal number syntax: \"1e400\"",
    ),
    (
        "{{0x}}",
        "template: output:1: illegal number syntax: \"0x\"",
    ),
    ("{{08}}", "template: output:1: integer overflow: \"08\""),
    ("{{1+}}", "template: output:1: bad number syntax: \"1+\""),
    ("{{\"\\'\"}}", "template: output:1: invalid syntax"),
    ("{{\"\\400\"}}", "template: output:1: invalid syntax"),
    ("{{\"\\ud800\"}}", "template: output:1: invalid syntax"),
    (
        "{{if .kind}}\n{{.a\n\n",
        "template: output:4: unclosed action started at output:2",
    ),
    (
        "{{/* one\ntwo */}}\n{{.x\n",
        "template: output:3: unclosed action started at output:2",
    ),
    (
        "x\n{{\"abc\n\"}}",
        "template: output:2: unterminated quoted string",
    ),
    (
        "x\n{{'\n'}}",
        "template: output:2: unterminated character constant",
    ),
    (
        "\n{{define \"a\"}}\n{{.x.y\n{{end}}",
        "template: output:4: unexpected \"{\" in operand",
    ),
    (
        "{{with .nope}}1{{else if .kind}}2{{end}}",
        "template: output:1: unexpected <if> in input",
    ),
    (
        "{{if .nope}}1{{else with .kind}}2{{end}}",
        "template: output:1: unexpected <with> in input",
    ),
    (
        "{{range .spec.items}}{{else}}{{continue}}{{end}}",
        "template: output:1: {{continue}} outside {{range}}",
    ),
    (
        "{{range $e := .spec.items}}{{$e}}{{end}}{{$e}}",
        "template: output:1: undefined variable \"$e\"",
    ),
    (
        "{{- /* one\ntwo\n */ -}}\n\n{{.x\n",
        "template: output:4: unclosed action started at output:3",
    ),
    (
        "a\n{{/* c */}}\nb\n{{/* d\n*/}}{{if}}",
        "template: output:4: missing value for if",
    ),
    (
        "{{/*\n*/}}{{/*\n*/}}x\n{{end}}",
        "template: output:2: unexpected {{end}}",
    ),
    (
        "\n\n{{- .a -}}\n\n{{- if -}}",
        "template: output:5: missing value for if",
    ),
    (
        "{{ .a -}}\n\n{{ if }}",
        "template: output:3: missing value for if",
    ),
    (
        "{{if 1}}\n{{else}}\n{{else}}\n{{end}}",
        "template: output:3: expected end; found {{else}}",
    ),
    (
        "{{if 1}}\n{{\n.a\n}}\n{{end}}\n{{end}}",
        "template: output:6: unexpected {{end}}",
    ),
    (
        "{{define \"a\"}}\nx\n{{end}}\n{{define \"a\"}}\ny\n{{end}}",
        "template: output:6: template: multiple definition of template \"a\"",
    ),
    (
        "{{block \"b\" .}}\n{{else}}{{end}}",
        "template: output:1: unexpected {{else}} in block clause",
    ),
    (
        "{{range .x}}\n{{define \"z\"}}{{end}}\n{{end}}",
        "template: output:2: unexpected <define> in command",
    ),
];
