module github.com/DataDog/zstd

go 1.26

require github.com/klauspost/compress v1.18.0
