import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.PBEParameterSpec;

/**
 * jasypt's StandardPBEStringEncryptor with the JDK's own SunJCE ciphers: 8-byte salt, 1000 iterations, base64 of
 * salt || ciphertext. One request per line on stdin, tab-separated:
 *   enc ALGORITHM PASSWORD SALT_HEX_OR_- BASE64_OF_UTF8_TEXT  -> the jasypt base64
 *   dec ALGORITHM PASSWORD - JASYPT_BASE64                    -> base64 of the UTF-8 text, or "ERR <exception>"
 */
public class JasyptCompat {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    Base64.Encoder b64 = Base64.getEncoder();
    Base64.Decoder unb64 = Base64.getDecoder();
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\t", -1);
      try {
        SecretKey key = SecretKeyFactory.getInstance(f[1]).generateSecret(new PBEKeySpec(f[2].toCharArray()));
        Cipher cipher = Cipher.getInstance(f[1]);
        if (f[0].equals("enc")) {
          byte[] salt = new byte[8];
          if (f[3].equals("-")) {
            new SecureRandom().nextBytes(salt);
          } else {
            for (int i = 0; i < 8; i++) {
              salt[i] = (byte) Integer.parseInt(f[3].substring(2 * i, 2 * i + 2), 16);
            }
          }
          cipher.init(Cipher.ENCRYPT_MODE, key, new PBEParameterSpec(salt.clone(), 1000));
          byte[] body = cipher.doFinal(unb64.decode(f[4]));
          byte[] out = Arrays.copyOf(salt, 8 + body.length);
          System.arraycopy(body, 0, out, 8, body.length);
          System.out.println(b64.encodeToString(out));
        } else {
          byte[] raw = unb64.decode(f[4]);
          cipher.init(Cipher.DECRYPT_MODE, key, new PBEParameterSpec(Arrays.copyOf(raw, 8), 1000));
          System.out.println(b64.encodeToString(cipher.doFinal(raw, 8, raw.length - 8)));
        }
      } catch (Exception e) {
        System.out.println("ERR " + e.getClass().getSimpleName());
      }
    }
  }
}
