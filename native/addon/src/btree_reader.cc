#include "btree_reader.h"

namespace streamscope::addon::btree {

void Pages::init(const uint8_t* data, size_t size) {
  if (size < 512) throw Damaged("too short to be a SQLite database");
  if (std::memcmp(data, "SQLite format 3", 16) != 0) throw Damaged("not a SQLite database");
  base = data;
  pageSize = get16(data + 16) == 1 ? 65536 : get16(data + 16);
  if (pageSize < 512 || (pageSize & (pageSize - 1)) != 0) throw Damaged("damaged header (page size)");
  if (data[20] > pageSize - 480) throw Damaged("damaged header (reserved bytes)");
  usable = pageSize - data[20];
  if (get32(data + 56) != 1) throw Unsupported("text is not UTF-8");
  format4 = get32(data + 44) >= 4;
  // As SQLite counts them (lockBtree): the header's count where the
  // version that last wrote the file kept it, else the file's size; a
  // count beyond the file is a damaged file.
  const uint32_t inFile = uint32_t(size / pageSize);
  const uint32_t inHeader = get32(data + 28);
  count = inHeader == 0 || get32(data + 24) != get32(data + 92) ? inFile : inHeader;
  if (count > inFile) throw Damaged("damaged header (more pages than the file holds)");
}

}  // namespace streamscope::addon::btree
