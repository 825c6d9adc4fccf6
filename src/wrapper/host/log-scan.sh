# Host program `log-scan`: answers a LogQuery over the whole retained log in one round trip, on the machine that
# holds it (head/tail/grep -E/cut/awk/wc, busybox included), sending only the candidate lines.
# Args: dir stream mode(g grep, f forward lines, b backward lines) pattern forward(1|0) from to(0: none)
# limit(0: none) budget keep. The pattern reaches grep and awk only as a quoted argument and an environment value.
# Output (parsed by parseLogScan in src/backends/ssh/remote-log-scan.ts): `head prev live dropped gapLine`, then
# per mode:
# - g, f: candidate lines `N FLAGS:TEXT` (FLAGS: c when cut at keep bytes, k inside a key block), then
#   `@ matches next eof` (matches -1 for f; next the first selected line not sent, 0 for none; eof 1 when f ran out
#   of lines) or `@@grep-failed` before it when grep refused the pattern;
# - b: `@ lines more` (lines up to `to`, more 1 when the log goes on past `to`), then the last keep+1 bytes raw.
# shellcheck shell=sh
d=$1 s=$2 m=$3 e=$4 fw=$5 a=$6 z=$7 k=$8 B=$9
shift 9
C=$1
LC_ALL=C
export LC_ALL
# shellcheck disable=SC2046 # the listing's fields, split
sz() { set -- $(ls -ln "$1" 2>/dev/null); echo "${5:-0}"; }
h=$(sz "$d/$s.head") p=$(sz "$d/$s.prev") l=$(sz "$d/$s") dr=0
[ -r "$d/$s.dropped" ] && read -r dr <"$d/$s.dropped"
dr=${dr:-0} hb=0 om=0 g=0 one=1
if [ "$dr" -gt 0 ]; then
  one=0 hb=$h
  [ "$dr" -lt "$hb" ] && hb=$dr
  om=$((dr - hb))
  [ "$om" -gt 0 ] && g=$(($(head -c "$hb" "$d/$s.head" | wc -l) + 2))
fi
[ "$p" -gt 0 ] && one=0
echo "$h $p $l $dr $g"
txt() {
  if [ "$dr" -gt 0 ]; then
    [ "$hb" -gt 0 ] && head -c "$hb" "$d/$s.head"
    [ "$om" -gt 0 ] && printf '\n[… %s bytes dropped by the log cap …]\n' "$om"
  fi
  [ "$p" -gt 0 ] && cat "$d/$s.prev"
  [ "$l" -gt 0 ] && head -c "$l" "$d/$s"
}
from() {
  if [ "$one" = 1 ]; then
    if [ "$a" -gt 1 ]; then tail -n "+$a" "$d/$s"; else cat "$d/$s"; fi
  elif [ "$a" -gt 1 ]; then txt | tail -n "+$a"
  else txt; fi
}
upto() { if [ "$one" = 1 ]; then head -n "$1" "$d/$s"; else txt | head -n "$1"; fi; }
case $m in
g)
  { if [ "$one" = 1 ] && [ "$l" -eq 0 ]; then :
    elif [ "$one" = 1 ] && [ "$z" -eq 0 ]; then grep -a -n -E -e "$e" -e 'PRIVATE KEY' "$d/$s"
    elif [ "$z" -gt 0 ]; then upto "$z" | grep -a -n -E -e "$e" -e 'PRIVATE KEY'
    else txt | grep -a -n -E -e "$e" -e 'PRIVATE KEY'; fi
    [ $? -gt 1 ] && echo '@@grep-failed'
  } | cut -b "1-$((C + 24))" | AWL_PAT=$e awk -v fw="$fw" -v k="$k" -v B="$B" -v C="$C" -v a="$a" -v g="$g" '
function cost(n) { return (n < B ? n : B) + 1 }
BEGIN { pat = ENVIRON["AWL_PAT"]; pem = "-----(BEGIN|END) ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"; h = 1; c = 0 }
$0 == "@@grep-failed" { fail = 1; next }
{
  i = index($0, ":"); n = substr($0, 1, i - 1) + 0; t = substr($0, i + 1); ismk = 0
  if (index(t, "PRIVATE KEY")) {
    if (match(t, pem)) {
      ty = substr(t, RSTART + 5, 1)
      for (j = (pend > h ? pend : h); j <= c; j++) nx[j] = ty
      pend = c + 1; mk = ty; mkn = n; ismk = 1
    }
    if (t !~ pat) next
  }
  if (n < a) next
  tot++
  len = length(t); ct = 0
  if (len > C) { t = substr(t, 1, C); ct = 1; len = B + 1 }
  if (ismk) st = "-"
  else if (mk != "" && !(g > 0 && mkn < g && n > g)) st = (mk == "B" ? "k" : "-")
  else st = (g > 0 && n > g) ? "u" : "-"
  if (fw == 1) {
    if ((k == 0 || c < k) && used < B) { c++ }
    else { if (nextn == "") nextn = n; next }
  } else c++
  num[c] = n; txt[c] = t; cut[c] = ct; sta[c] = st; co[c] = cost(len); used += co[c]
  if (fw != 1) {
    while ((k > 0 && c - h + 1 > k) || (c > h && used - co[h] >= B)) {
      used -= co[h]; delete num[h]; delete txt[h]; delete cut[h]; delete sta[h]; delete co[h]; delete nx[h]; h++
    }
  }
}
END {
  for (j = h; j <= c; j++) {
    st = sta[j]
    if (st == "u") st = (nx[j] == "E") ? "k" : "-"
    printf "%d %s%s:%s\n", num[j], (cut[j] ? "c" : "-"), st, txt[j]
  }
  if (fail) print "@@grep-failed"
  print "@ " (tot + 0) " " (nextn + 0) " 0"
}'
  ;;
f)
  if [ "$z" -gt 0 ]; then n=$((z - a + 1)); else n=''; fi
  if [ "$k" -gt 0 ] && { [ -z "$n" ] || [ "$k" -lt "$n" ]; }; then n=$k; fi
  { if [ -n "$n" ]; then from | head -n $((n + 1)); else from; fi; } | cut -b "1-$((C + 1))" |
    awk -v k="$k" -v B="$B" -v C="$C" -v off=$((a - 1)) -v z="$z" '
function cost(n) { return (n < B ? n : B) + 1 }
{
  n = off + NR
  if (z > 0 && n > z) { done = 1; exit }
  if ((k > 0 && got >= k) || used >= B) { nextn = n; exit }
  len = length($0); ct = 0
  if (len > C) { $0 = substr($0, 1, C); ct = 1; len = B + 1 }
  printf "%d %s-:%s\n", n, (ct ? "c" : "-"), $0
  got++; used += cost(len)
}
END { print "@ -1 " (nextn + 0) " " ((nextn == "" && !done) ? 1 : 0) }'
  ;;
b)
  if [ "$z" -gt 0 ]; then
    t=$(upto $((z + 1)) | wc -l)
    [ "$(upto $((z + 1)) | tail -c 1 | wc -l)" -eq 1 ] || t=$((t + 1))
    more=0
    if [ "$t" -gt "$z" ]; then more=1 t=$z; fi
    [ "$t" -eq 1 ] && [ "$(upto 1 | wc -c)" -eq 0 ] && t=0
    echo "@ $t $more"
    upto "$z" | tail -c $((C + 1))
  else
    if [ "$one" = 1 ]; then
      t=$(wc -l <"$d/$s")
      [ "$l" -gt 0 ] && [ "$(tail -c 1 "$d/$s" | wc -l)" -eq 0 ] && t=$((t + 1))
      echo "@ $t 0"
      [ "$l" -gt 0 ] && tail -c $((C + 1)) "$d/$s"
    else
      t=$(txt | wc -l)
      [ "$(txt | tail -c 1 | wc -l)" -eq 0 ] && t=$((t + 1))
      echo "@ $t 0"
      txt | tail -c $((C + 1))
    fi
  fi
  ;;
esac
exit 0
