import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;

/**
 * What Java itself answers, for tests of icefloe's Java number semantics.
 *
 * Reads one request per line (tab-separated: an operation, then its arguments) and
 * prints one answer per line. Texts that may hold blanks travel as UTF-8 hex.
 *   V                   the JDK's feature version
 *   D bits ours         Double.toString(d), and whether Double.parseDouble(ours) is d
 *   F bits ours         Float.toString((float) d), and whether Float.parseFloat(ours) is (float) d
 *   B hexText           new BigDecimal(text).toString()
 *   P hexText           the bits of Double.parseDouble(text)
 *   L hexText           Long.parseLong(text)
 * "d" is the double with the given 64 bits (hex); a NumberFormatException prints "!".
 */
public final class JavaText {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            out.append(answer(line.split("\t", -1))).append('\n');
        }
        System.out.print(out);
    }

    private static String answer(String[] request) {
        try {
            switch (request[0]) {
                case "V": return Integer.toString(Runtime.version().feature());
                case "D": return doubleText(toDouble(request[1]), request[2]);
                case "F": return floatText((float) toDouble(request[1]), request[2]);
                case "B": return new BigDecimal(text(request[1])).toString();
                case "P": return Long.toHexString(Double.doubleToRawLongBits(Double.parseDouble(text(request[1]))));
                case "L": return Long.toString(Long.parseLong(text(request[1])));
                default: throw new IllegalArgumentException("unknown request " + request[0]);
            }
        } catch (NumberFormatException e) {
            return "!";
        }
    }

    private static String doubleText(double d, String ours) {
        boolean readsBack = Double.doubleToRawLongBits(Double.parseDouble(ours)) == Double.doubleToRawLongBits(d);
        return Double.toString(d) + "\t" + readsBack;
    }

    private static String floatText(float f, String ours) {
        boolean readsBack = Float.floatToRawIntBits(Float.parseFloat(ours)) == Float.floatToRawIntBits(f);
        return Float.toString(f) + "\t" + readsBack;
    }

    private static double toDouble(String bits) {
        return Double.longBitsToDouble(Long.parseUnsignedLong(bits, 16));
    }

    private static String text(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
