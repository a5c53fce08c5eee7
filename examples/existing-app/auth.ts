/**
 * The app's own authentication, which existed before the agent: passport with passport-jwt
 * (HS256 bearer tokens). The agent reuses it; nothing here knows about A2A.
 */
import { Passport } from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import { SignJWT } from 'jose';

/**
 * DEV ONLY: the default signing secret lets `npx tsx examples/existing-app/server.ts` work out of
 * the box. A real deployment sets EXISTING_APP_JWT_SECRET (or verifies tokens from its identity
 * provider with a public key) and never ships this default.
 */
export const DEV_JWT_SECRET = process.env.EXISTING_APP_JWT_SECRET ?? 'dev-only-secret-do-not-use-in-production!';

/** What the app keeps as `req.user`; a2aAuth's fromRequestUser() reads `id` and `displayName`. */
export interface AppUser {
  readonly id: string;
  readonly displayName?: string;
}

/** A passport instance (not the global one) with the app's 'jwt' strategy. */
export function createPassport(secret: string): InstanceType<typeof Passport> {
  const passport = new Passport();
  passport.use(
    new JwtStrategy(
      { jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(), secretOrKey: secret, algorithms: ['HS256'] },
      (payload: { sub?: unknown; name?: unknown }, done: (error: unknown, user?: AppUser | false) => void) => {
        if (typeof payload.sub !== 'string' || payload.sub === '') return done(null, false);
        done(null, { id: payload.sub, ...(typeof payload.name === 'string' ? { displayName: payload.name } : {}) });
      },
    ),
  );
  return passport;
}

/** DEV ONLY: signs a token the app accepts, for trying it out and for tests. */
export function signDevToken(user: { sub: string; name?: string }, secret: string, expiresIn = '1h'): Promise<string> {
  return new SignJWT({ ...(user.name ? { name: user.name } : {}) })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user.sub)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}
