import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { RaskConfigError, resolveConfig } from '../../infra/config.js';
import { flat, logicalId, resourcesOfType, synthRask } from './helpers.js';

/** `rask:domainName` (docs/deploy.md, "A custom domain"): the URL clients hold survives a replaced API. */
const DOMAIN = {
  domainName: 'catalog.example.com',
  certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789',
  hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  hostedZoneName: 'example.com',
};

const endpointOf = (t: ReturnType<typeof synthRask>['statelessTemplate']) =>
  flat((t.toJSON().Outputs as Record<string, { Value: unknown }>).Endpoint!.Value);

describe('a custom domain', () => {
  it('maps a regional TLS 1.2 domain to the stage, adds the alias record, and gives clients the domain', () => {
    const built = synthRask(DOMAIN, { nag: true });
    const t = built.statelessTemplate;
    const [domain, ...more] = Object.values(resourcesOfType(t, 'AWS::ApiGateway::DomainName'));
    expect(more).toEqual([]);
    expect(domain!.Properties).toMatchObject({
      DomainName: DOMAIN.domainName,
      RegionalCertificateArn: DOMAIN.certificateArn,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    const [mapping] = Object.values(resourcesOfType(t, 'AWS::ApiGateway::BasePathMapping'));
    const api = logicalId(t, 'AWS::ApiGateway::RestApi', 'Api');
    expect(flat(mapping!.Properties!.RestApiId)).toBe(`<${api}>`);
    expect(mapping!.Properties!.BasePath).toBeUndefined();
    const [record] = Object.values(resourcesOfType(t, 'AWS::Route53::RecordSet'));
    expect(record!.Properties).toMatchObject({ Name: `${DOMAIN.domainName}.`, Type: 'A', HostedZoneId: DOMAIN.hostedZoneId });
    expect(endpointOf(t)).toBe('https://catalog.example.com');
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  }, 180_000);

  it('puts the base path into the endpoint, and creates no record without a hosted zone', () => {
    const t = synthRask({ domainName: DOMAIN.domainName, certificateArn: DOMAIN.certificateArn, domainBasePath: 'lance' }).statelessTemplate;
    expect(Object.values(resourcesOfType(t, 'AWS::ApiGateway::BasePathMapping'))[0]!.Properties!.BasePath).toBe('lance');
    expect(Object.keys(resourcesOfType(t, 'AWS::Route53::RecordSet'))).toEqual([]);
    expect(endpointOf(t)).toBe('https://catalog.example.com/lance');
  }, 120_000);

  it('without one, the endpoint is the stage URL and no domain exists', () => {
    const t = synthRask().statelessTemplate;
    expect(Object.keys(resourcesOfType(t, 'AWS::ApiGateway::DomainName'))).toEqual([]);
    expect(endpointOf(t)).toMatch(/^https:\/\/<Api[0-9A-F]+>\.execute-api\.<AWS::Region>\.<AWS::URLSuffix>\/prod$/);
  }, 120_000);

  it('refuses settings that do not belong together, naming them', () => {
    const refused = (raw: Record<string, unknown>) => {
      try {
        resolveConfig(raw);
      } catch (err) {
        expect(err).toBeInstanceOf(RaskConfigError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(raw)}`);
    };
    expect(refused({ domainName: DOMAIN.domainName })).toContain('rask:certificateArn');
    expect(refused({ certificateArn: DOMAIN.certificateArn })).toContain('only apply with rask:domainName');
    expect(refused({ ...DOMAIN, hostedZoneName: undefined })).toContain('go together');
    expect(refused({ ...DOMAIN, hostedZoneName: 'example.org' })).toContain('not inside the hosted zone example.org');
    expect(refused({ ...DOMAIN, domainName: 'Catalog Example' })).toContain('a DNS host name');
    expect(refused({ ...DOMAIN, certificateArn: 'arn:aws:iam::123456789012:role/x' })).toContain('an ACM certificate ARN');
    expect(refused({ ...DOMAIN, domainBasePath: 'a/b' })).toContain('one path segment');
    expect(resolveConfig(DOMAIN)).toMatchObject(DOMAIN);
  });
});
