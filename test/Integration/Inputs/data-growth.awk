# How much a plan object's data grows with the model's widths: reads
# `size -A` of the narrow object, then of the wide one, and sums the sections
# that hold data (.rodata, .data, .data.rel.ro, .bss, and their .l*/.tdata
# variants). Fails when the wide object's data exceeds the narrow one's by
# more than `limit` bytes: a constant that scales with a tensor's size would
# add at least one tensor's worth (KiB to GiB), while constant pools may
# differ by a few hundred bytes between trip counts.
BEGIN { limit = 4096 }
FNR == 1 { file++ }
$1 ~ /^\.(l?rodata|l?data|data\.rel\.ro|l?bss|tdata|tbss)$/ { data[file] += $2 }
END {
  growth = data[2] - data[1]
  if (growth > limit) {
    printf "FAIL: the wide plan's data is %d bytes larger (%d vs %d)\n", growth, data[2], data[1]
    exit 1
  }
  printf "data of the wide plan: %d bytes; growth within %d bytes\n", data[2], limit
}
